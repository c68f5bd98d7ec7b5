import FoundationEssentials
import GRDB
import Logging

extension StateStore {
    /// Opens the store at `url` so that the service always starts. A damaged file (not a database, corrupt,
    /// truncated, or written by a newer QueuePlayer) is moved aside, never deleted, with its journal files, and an
    /// empty store takes its place; a file that cannot be written (read-only folder, full disk) leaves the state in
    /// memory for this run. Either is logged once, naming the file and what to do. Throws only if SQLite cannot
    /// even open a store in memory. Call once, at start-up, from any thread.
    package static func openRecovering(url: URL, logger: Logger, now: Date = Date()) throws -> StateStore {
        do {
            return try openVerified(url: url)
        } catch let damage as StoreDamage {
            return try replaceDamaged(url: url, because: damage.reason, logger: logger, now: now)
        } catch let error as DatabaseError where error.isDamage {
            return try replaceDamaged(url: url, because: "\(error)", logger: logger, now: now)
        } catch {
            return try inMemory(instead: url, because: "\(error)", logger: logger)
        }
    }

    /// Why an opened file was judged damaged.
    private struct StoreDamage: Error {
        var reason: String
    }

    /// Opens the file and checks that it is whole and of a schema this version knows, and that it loads.
    private static func openVerified(url: URL) throws -> StateStore {
        let store = try StateStore(url: url)
        if let problem = try store.integrityProblem() {
            throw StoreDamage(reason: problem)
        }
        _ = try store.load()
        return store
    }

    private static func replaceDamaged(
        url: URL, because reason: String, logger: Logger, now: Date
    ) throws
        -> StateStore
    {
        let aside: URL
        do {
            aside = try moveAside(url, now: now)
        } catch {
            return try inMemory(
                instead: url, because: "it is damaged (\(reason)) and could not be moved aside: \(error)",
                logger: logger)
        }
        do {
            let store = try StateStore(url: url)
            logger.error(
                """
                the state store \(url.path) was damaged (\(reason)): moved it to \(aside.path) and started with an \
                empty queue; the old file is kept for inspection and can be deleted
                """)
            return store
        } catch {
            return try inMemory(instead: url, because: "\(error)", logger: logger)
        }
    }

    private static func inMemory(instead url: URL, because reason: String, logger: Logger) throws -> StateStore {
        logger.error(
            """
            cannot use the state store \(url.path): \(reason); the queue and position are kept in memory only until \
            the daemon restarts (check that the folder is writable and the disk has room, or pass --state-file)
            """)
        return try StateStore()
    }

    /// Renames the store and its `-wal` and `-shm` files to `NAME.damaged-TIMESTAMP` (with the same suffixes);
    /// returns the store's new name. The journal files go with it: left behind, SQLite would apply them to the new
    /// store.
    private static func moveAside(_ url: URL, now: Date) throws -> URL {
        let stamp = Int(now.timeIntervalSince1970)
        let aside = url.deletingLastPathComponent().appendingPathComponent("\(url.lastPathComponent).damaged-\(stamp)")
        let files = FileManager.default
        for suffix in ["", "-wal", "-shm"] {
            let source = URL(fileURLWithPath: url.path + suffix)
            guard files.fileExists(atPath: source.path) else { continue }
            try files.moveItem(at: source, to: URL(fileURLWithPath: aside.path + suffix))
        }
        return aside
    }
}

extension DatabaseError {
    /// True for errors that say the file itself is bad, as opposed to a folder or disk that refuses writes.
    fileprivate var isDamage: Bool {
        [.SQLITE_NOTADB, .SQLITE_CORRUPT, .SQLITE_FORMAT, .SQLITE_SCHEMA, .SQLITE_ERROR, .SQLITE_MISMATCH]
            .contains(resultCode)
    }
}

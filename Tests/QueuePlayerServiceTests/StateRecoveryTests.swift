import Foundation
import GRDB
import QueuePlayer
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayerService

/// A state file left damaged (a power cut on an SD card, a downgrade, a full disk) never stops the service: the
/// file is moved aside, never deleted, and the daemon starts empty, or in memory only when nothing can be written.
@Suite("Damaged or unwritable state never stops the service", .tier(.deterministic))
struct StateRecoveryTests {
    /// A folder of its own, removed when the test ends.
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("queueplayer-state-\(UUID())")
        var store: URL { url.appendingPathComponent("state.sqlite") }

        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }

        /// The files beside the store whose names say they were moved aside.
        func movedAside() throws -> [URL] {
            try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
                .filter { $0.lastPathComponent.hasPrefix("state.sqlite.damaged-") }
        }
    }

    static let entries = (1...500).map { QueueEntry(id: $0, url: URL(fileURLWithPath: "/music/track-\($0).mp3")) }

    /// Opens the store as the daemon does; checks it is empty and takes writes.
    private func openAndCheckUsable(_ folder: Folder, log: CapturedLog) throws -> StateStore {
        let store = try StateStore.openRecovering(url: folder.store, logger: log.logger)
        #expect(try store.load().queue.isEmpty)
        try store.saveQueue(Array(Self.entries.prefix(3)))
        #expect(try store.load().queue == Array(Self.entries.prefix(3)))
        return store
    }

    @Test("the store journals ahead (WAL): a commit is in the file's log, and another connection reads it")
    func writeAheadLog() throws {
        let folder = try Folder()
        let store = try openAndCheckUsable(folder, log: CapturedLog())
        #expect(FileManager.default.fileExists(atPath: folder.store.path + "-wal"))
        let reader = try DatabaseQueue(path: folder.store.path)
        #expect(try reader.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
        #expect(try reader.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM queueItem") } == 3)
        _ = store
    }

    @Test("a file of garbage is moved aside with its bytes intact, logged once, and an empty store takes its place")
    func garbage() throws {
        let folder = try Folder()
        let garbage = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) })
        try garbage.write(to: folder.store)
        let log = CapturedLog()
        let store = try openAndCheckUsable(folder, log: log)
        #expect(store.location == folder.store.path)
        let aside = try #require(try folder.movedAside().first)
        #expect(try Data(contentsOf: aside) == garbage)
        let errors = log.messages(at: .error)
        #expect(errors.count == 1)
        #expect(errors.first?.contains(folder.store.path) == true && errors.first?.contains(aside.path) == true)
    }

    @Test("a truncated file is moved aside, and the next start opens the new store without complaint")
    func truncated() throws {
        let folder = try Folder()
        do {
            let store = try StateStore(url: folder.store)
            try store.saveQueue(Self.entries)
            try store.saveHistory(Self.entries.map(\.url))
        }
        // The last connection closed: the journal is folded into the file, which a power cut then cuts short.
        let whole = try Data(contentsOf: folder.store)
        try whole.prefix(whole.count / 2).write(to: folder.store)
        let log = CapturedLog()
        _ = try openAndCheckUsable(folder, log: log)
        #expect(try folder.movedAside().count == 1)
        #expect(log.messages(at: .error).count == 1)

        let again = CapturedLog()
        let reopened = try StateStore.openRecovering(url: folder.store, logger: again.logger)
        #expect(try reopened.load().queue == Array(Self.entries.prefix(3)))
        #expect(again.all.isEmpty)
        #expect(try folder.movedAside().count == 1)
    }

    @Test("a store written by a newer version is kept aside, not migrated down or overwritten")
    func newerSchema() throws {
        let folder = try Folder()
        do {
            let store = try StateStore(url: folder.store)
            try store.saveQueue(Self.entries)
        }
        do {
            let database = try DatabaseQueue(path: folder.store.path)
            try database.write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99')") }
        }
        let log = CapturedLog()
        _ = try openAndCheckUsable(folder, log: log)
        let aside = try #require(try folder.movedAside().first)
        #expect(log.messages(at: .error).first?.contains("newer version") == true)
        let kept = try DatabaseQueue(path: aside.path)
        #expect(try kept.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM queueItem") } == Self.entries.count)
    }

    @Test("where no file can be written, the state is kept in memory, and the error says what to check")
    func unwritable() throws {
        // A path below a regular file can never be created, even by root.
        let folder = try Folder()
        let blocker = folder.url.appendingPathComponent("not-a-folder")
        try Data("x".utf8).write(to: blocker)
        let log = CapturedLog()
        let store = try StateStore.openRecovering(
            url: blocker.appendingPathComponent("state.sqlite"), logger: log.logger)
        #expect(store.location == "memory")
        try store.saveQueue(Self.entries)
        #expect(try store.load().queue.count == Self.entries.count)
        let error = try #require(log.messages(at: .error).first)
        #expect(error.contains(blocker.path) && error.contains("memory only") && error.contains("writable"))
    }
}

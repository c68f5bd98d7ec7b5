import FoundationEssentials
import GRDB
import Logging
import QueuePlayer
import QueuePlayerControl

/// The daemon's durable state in SQLite (GRDB): the queue with its stable ids, the current item and position,
/// the volume, the action at an item's end, the history `previous` walks back through, and where each podcast
/// episode was left (StateStore+Episodes.swift), the music folder's index (StateStore+MusicIndex.swift), and MPD's
/// stickers (StateStore+Stickers.swift).
///
/// Every write is one transaction in WAL mode (synchronous NORMAL), committed before the command that caused it
/// is acknowledged, so a SIGKILL loses no acknowledged queue edit; the position is checkpointed often enough (see
/// ``PlayerController``) to lose at most a second. Threading: any thread; GRDB serialises access.
package final class StateStore: Sendable {
    /// What a restart restores.
    package struct Saved: Equatable {
        package var queue: [QueueEntry]
        /// The priority of each entry of `queue` that has one, by entry id.
        package var priorities: [Int: UInt8]
        /// The tags given to each entry of `queue` that has some, by entry id, in the order given.
        package var tags: [Int: [EntryTag]] = [:]
        /// The part of its item each entry of `queue` playing a part plays, by entry id.
        package var ranges: [Int: MediaTimeRange] = [:]
        /// Frames into the first entry of `queue`.
        package var positionFrames: Int
        /// The same, in seconds (shown before the item is opened again).
        package var positionSeconds: Double

        /// The position as a time in the rate its frames count at (their ratio to the seconds), so that it is exact
        /// when the item plays at that rate again and converted when it does not (another sound server's rate).
        package var position: MediaTime {
            guard positionFrames > 0, positionSeconds > 0 else { return .zero }
            let rate = (Double(positionFrames) / positionSeconds).rounded()
            return MediaTime(value: Int64(positionFrames), timescale: Int32(clamping: Int64(rate)))
        }
        package var volume: Float
        package var holdsAtItemEnd: Bool
        /// Holding at an item's end is for one item only (MPD's `single oneshot`).
        package var holdsOnce: Bool
        /// What plays again.
        package var loop: LoopStatus
        package var shuffles: Bool
        /// Which ReplayGain plays.
        package var replayGain: ReplayGain
        package var wasPlaying: Bool
        package var history: [URL]
    }

    /// Where the store lives, as log lines name it: a file's path, or `memory` for an in-memory store.
    package let location: String
    /// The most SQLite keeps of the file in its own page cache (SQLite's default: 2,000).
    static let pageCacheKibibytes = 256
    /// Where the rows are; the store's extensions (StateStore+Episodes.swift) read and write it too.
    let database: DatabaseQueue

    /// Opens (creating, and migrating to the current schema) the store at `url`.
    package init(url: URL) throws {
        location = url.path
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        var configuration = Configuration()
        // WAL mode is set here rather than through GRDB's `journalMode = .wal`, which also makes sure a non-empty
        // WAL file exists (a table created and dropped, or Foundation's URL resource values read) for the snapshots
        // of a DatabasePool: a queue takes none, and that check took 1.7 of the 2.8 ms the store took to open.
        // In WAL mode, NORMAL makes a commit durable against a crash of the process (SIGKILL included) without an
        // fsync per commit; only a power loss can take back the last commits.
        configuration.prepareDatabase { database in
            let journalMode = try String.fetchOne(database, sql: "PRAGMA journal_mode = WAL")
            guard journalMode == "wal" else {
                throw DatabaseError(
                    message: "SQLite could not switch the journal to WAL mode (it is \(journalMode ?? "unknown"))")
            }
            try database.execute(sql: "PRAGMA synchronous = NORMAL")
            // The store is written as the queue changes and read once, at start: SQLite's own page cache (2 MiB by
            // default) would only keep a second copy of pages the kernel's page cache already holds, in the
            // daemon's anonymous memory (about 1 MiB after a 10,000-item queue is saved).
            try database.execute(sql: "PRAGMA cache_size = -\(Self.pageCacheKibibytes)")
        }
        database = try DatabaseQueue(path: url.path, configuration: configuration)
        try Self.migrator.migrate(database)
    }

    /// A store that lives in memory only, empty, for tests and for running when no file can be written.
    package init() throws {
        location = "memory"
        database = try DatabaseQueue()
        try Self.migrator.migrate(database)
    }

    /// How many rows the store has inserted, updated or deleted since it was opened (SQLite's `total_changes()`).
    package func rowsChanged() throws -> Int {
        try database.read { $0.totalChangesCount }
    }

    /// Nil when the store is whole and of a schema this version knows; otherwise what is wrong with it.
    package func integrityProblem() throws -> String? {
        try database.read { database in
            if try Self.migrator.hasBeenSuperseded(database) {
                return "it was written by a newer version of QueuePlayer"
            }
            let findings = try String.fetchAll(database, sql: "PRAGMA quick_check")
            return findings == ["ok"] ? nil : "SQLite's check found: " + findings.prefix(3).joined(separator: "; ")
        }
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { database in
            try database.create(table: "queueItem") { table in
                table.column("id", .integer).primaryKey()
                table.column("ordinal", .integer).notNull()
                table.column("path", .text).notNull()
            }
            try database.create(table: "player") { table in
                table.column("id", .integer).primaryKey().check { $0 == 1 }
                table.column("positionFrames", .integer).notNull().defaults(to: 0)
                table.column("positionSeconds", .double).notNull().defaults(to: 0)
                table.column("volume", .double).notNull().defaults(to: 1)
                table.column("holdsAtItemEnd", .boolean).notNull().defaults(to: false)
                table.column("wasPlaying", .boolean).notNull().defaults(to: false)
            }
            try database.execute(sql: "INSERT INTO player (id) VALUES (1)")
            try database.create(table: "history") { table in
                table.autoIncrementedPrimaryKey("sequence")
                table.column("path", .text).notNull()
            }
        }
        migrator.registerMigration("v2: episodes") { database in
            try database.create(table: "episode") { table in
                table.column("url", .text).primaryKey()
                table.column("seconds", .double).notNull()
                table.column("isPlayed", .boolean).notNull()
            }
        }
        migrator.registerMigration("v3: episode details") { database in
            try database.alter(table: "episode") { table in
                table.add(column: "title", .text)
                table.add(column: "show", .text)
                table.add(column: "published", .double)
            }
        }
        migrator.registerMigration("v4: episode durations") { database in
            try database.alter(table: "episode") { table in table.add(column: "duration", .double) }
        }
        migrator.registerMigration("v5: loop status") { database in
            try database.alter(table: "player") { table in
                table.add(column: "loopStatus", .text).notNull().defaults(to: LoopStatus.none.rawValue)
            }
        }
        migrator.registerMigration("v6: shuffle") { database in
            try database.alter(table: "player") { table in
                table.add(column: "shuffles", .boolean).notNull().defaults(to: false)
            }
        }
        migrator.registerMigration("v7: music index") { database in
            try database.create(table: "musicIndex") { table in
                table.column("id", .integer).primaryKey().check { $0 == 1 }
                table.column("folder", .text).notNull()
                table.column("updated", .double).notNull()
            }
            try database.create(table: "song") { table in
                table.column("path", .text).primaryKey()
                table.column("modified", .double).notNull()
                table.column("frames", .integer).notNull()
                table.column("rate", .integer).notNull()
                for tag in ["title", "artists", "album", "albumArtist", "track", "disc", "date", "genre", "composer"] {
                    table.column(tag, .text)
                }
            }
        }
        migrator.registerMigration("v8: single once") { database in
            try database.alter(table: "player") { table in
                table.add(column: "holdsOnce", .boolean).notNull().defaults(to: false)
            }
        }
        migrator.registerMigration("v9: replay gain") { database in
            try database.alter(table: "player") { table in
                table.add(column: "replayGain", .text).notNull().defaults(to: ReplayGain.off.rawValue)
            }
        }
        migrator.registerMigration("v10: priorities") { database in
            try database.alter(table: "queueItem") { table in
                table.add(column: "priority", .integer).notNull().defaults(to: 0)
            }
        }
        migrator.registerMigration("v11: stickers") { database in
            try database.create(table: "sticker") { table in
                table.column("type", .text).notNull()
                table.column("uri", .text).notNull()
                table.column("name", .text).notNull()
                table.column("value", .text).notNull()
                table.primaryKey(["type", "uri", "name"])
            }
        }
        migrator.registerMigration("v12: entry tags") { database in
            try database.create(table: "queueItemTag") { table in
                table.column("entryID", .integer).notNull()
                table.column("ordinal", .integer).notNull()
                table.column("name", .text).notNull()
                table.column("value", .text).notNull()
                table.primaryKey(["entryID", "ordinal"])
            }
        }
        migrator.registerMigration("v13: playback ranges") { database in
            try database.alter(table: "queueItem") { table in
                table.add(column: "rangeStart", .double)
                table.add(column: "rangeEnd", .double)
            }
        }
        return migrator
    }

    /// Replaces the saved queue with `queue` (the current entry first), the `priorities` of its entries, the `tags`
    /// given to them and the playback `ranges` they play (each by id; a range in seconds, its end empty when open).
    package func saveQueue(
        _ queue: [QueueEntry], priorities: [Int: UInt8] = [:], tags: [Int: [EntryTag]] = [:],
        ranges: [Int: MediaTimeRange] = [:]
    ) throws {
        try database.write { database in
            try database.execute(sql: "DELETE FROM queueItem")
            try database.execute(sql: "DELETE FROM queueItemTag")
            let insert = try database.makeStatement(
                sql: """
                    INSERT INTO queueItem (id, ordinal, path, priority, rangeStart, rangeEnd) VALUES (?, ?, ?, ?, ?, ?)
                    """)
            let insertTag = try database.makeStatement(
                sql: "INSERT INTO queueItemTag (entryID, ordinal, name, value) VALUES (?, ?, ?, ?)")
            for (ordinal, entry) in queue.enumerated() {
                let range = ranges[entry.id]
                let end = range.flatMap { $0.end.isNumeric ? $0.end.seconds : nil }
                try insert.execute(arguments: [
                    entry.id, ordinal, entry.location, Int(priorities[entry.id] ?? 0), range?.start.seconds, end,
                ])
                for (tagOrdinal, tag) in (tags[entry.id] ?? []).enumerated() {
                    try insertTag.execute(arguments: [entry.id, tagOrdinal, tag.name, tag.value])
                }
            }
        }
    }

    /// Records where playback is and how it is set up.
    package func checkpoint(
        positionFrames: Int, positionSeconds: Double, volume: Float, holdsAtItemEnd: Bool, holdsOnce: Bool,
        loop: LoopStatus, shuffles: Bool, replayGain: ReplayGain, isPlaying: Bool
    ) throws {
        // One statement, compiled once and kept: it runs every second while playing. On its own it is a
        // transaction (SQLite's autocommit), so GRDB's BEGIN and COMMIT around it would only add two statements.
        try database.writeWithoutTransaction { database in
            try database.cachedStatement(
                sql: """
                    UPDATE player SET positionFrames = ?, positionSeconds = ?, volume = ?, holdsAtItemEnd = ?,
                    holdsOnce = ?, loopStatus = ?, shuffles = ?, replayGain = ?, wasPlaying = ? WHERE id = 1
                    """
            ).execute(
                arguments: [
                    positionFrames, positionSeconds, Double(volume), holdsAtItemEnd, holdsOnce, loop.rawValue, shuffles,
                    replayGain.rawValue, isPlaying,
                ])
        }
    }

    /// Replaces the saved history with `history` (oldest first).
    package func saveHistory(_ history: [URL]) throws {
        try database.write { database in
            try database.execute(sql: "DELETE FROM history")
            let insert = try database.makeStatement(sql: "INSERT INTO history (path) VALUES (?)")
            for url in history {
                try insert.execute(arguments: [url.path])
            }
        }
    }

    /// What was saved last.
    package func load() throws -> Saved {
        try database.read { database in
            let rows = try Row.fetchAll(
                database, sql: "SELECT id, path, priority, rangeStart, rangeEnd FROM queueItem ORDER BY ordinal")
            let queue = rows.map { row in QueueEntry(id: row["id"], location: row["path"] as String) }
            let priorities = Dictionary(
                rows.compactMap { row -> (Int, UInt8)? in
                    let priority = UInt8(clamping: row["priority"] as Int)
                    return priority > 0 ? (row["id"], priority) : nil
                }, uniquingKeysWith: { first, _ in first })
            let ranges = Dictionary(
                rows.compactMap { row -> (Int, MediaTimeRange)? in
                    guard let start = row["rangeStart"] as Double? else { return nil }
                    return (row["id"], MediaTimeRange(seconds: start, to: row["rangeEnd"]))
                }, uniquingKeysWith: { first, _ in first })
            let tagRows = try Row.fetchAll(
                database, sql: "SELECT entryID, name, value FROM queueItemTag ORDER BY entryID, ordinal")
            let tags = tagRows.reduce(into: [Int: [EntryTag]]()) { tags, row in
                tags[row["entryID"], default: []].append(EntryTag(name: row["name"], value: row["value"]))
            }
            let player = try Row.fetchOne(database, sql: "SELECT * FROM player WHERE id = 1")
            let history = try String.fetchAll(database, sql: "SELECT path FROM history ORDER BY sequence")
            return Saved(
                queue: queue, priorities: priorities, tags: tags, ranges: ranges,
                positionFrames: player?["positionFrames"] ?? 0,
                positionSeconds: player?["positionSeconds"] ?? 0,
                volume: Float(player?["volume"] as Double? ?? 1), holdsAtItemEnd: player?["holdsAtItemEnd"] ?? false,
                holdsOnce: player?["holdsOnce"] ?? false,
                loop: (player?["loopStatus"] as String?).flatMap(LoopStatus.init(named:)) ?? .none,
                shuffles: player?["shuffles"] ?? false,
                replayGain: (player?["replayGain"] as String?).flatMap(ReplayGain.init(named:)) ?? .off,
                wasPlaying: player?["wasPlaying"] ?? false, history: history.map { URL(itemLocation: $0) })
        }
    }
}

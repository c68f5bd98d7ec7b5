import GRDB

/// MPD's stickers: a name and a value a client keeps for a song of the music index (a rating, a play count), by the
/// song's path in the music folder. They outlive the song's leaving the index, and apply again if it comes back.
extension StateStore {
    /// How ``stickers(named:under:matching:)`` compares a sticker's value with the one given: as text, as SQLite
    /// (and MPD) compare them.
    package enum StickerComparison: String, Sendable {
        case equal = "="
        case less = "<"
        case greater = ">"
    }

    /// The value of sticker `name` of the song at `path`, or nil when it has none.
    package func sticker(_ name: String, ofSong path: String) throws -> String? {
        try database.read { database in
            try String.fetchOne(
                database, sql: "SELECT value FROM sticker WHERE type = 'song' AND uri = ? AND name = ?",
                arguments: [path, name])
        }
    }

    /// Every sticker of the song at `path` as (name, value), by name.
    package func stickers(ofSong path: String) throws -> [(name: String, value: String)] {
        try database.read { database in
            try Row.fetchAll(
                database, sql: "SELECT name, value FROM sticker WHERE type = 'song' AND uri = ? ORDER BY name",
                arguments: [path]
            ).map { ($0["name"], $0["value"]) }
        }
    }

    /// Gives the song at `path` sticker `name` with `value`, replacing the value it had.
    package func setSticker(_ name: String, ofSong path: String, to value: String) throws {
        try database.write { database in
            try database.execute(
                sql: "INSERT INTO sticker (type, uri, name, value) VALUES ('song', ?, ?, ?) "
                    + "ON CONFLICT (type, uri, name) DO UPDATE SET value = excluded.value",
                arguments: [path, name, value])
        }
    }

    /// Deletes sticker `name` of the song at `path`, or all its stickers when `name` is nil; false when there was
    /// none to delete.
    package func deleteSticker(_ name: String?, ofSong path: String) throws -> Bool {
        try database.write { database in
            if let name {
                try database.execute(
                    sql: "DELETE FROM sticker WHERE type = 'song' AND uri = ? AND name = ?", arguments: [path, name])
            } else {
                try database.execute(sql: "DELETE FROM sticker WHERE type = 'song' AND uri = ?", arguments: [path])
            }
            return database.changesCount > 0
        }
    }

    /// The songs with sticker `name`, under folder `folder` of the music folder (empty: all of it), as (path,
    /// value), by path; with `matching`, only those whose value compares so.
    package func stickers(
        named name: String, under folder: String, matching: (StickerComparison, String)? = nil
    ) throws -> [(path: String, value: String)] {
        let prefix = folder.isEmpty ? "" : folder + "/"
        var sql = "SELECT uri, value FROM sticker WHERE type = 'song' AND name = ? AND substr(uri, 1, ?) = ?"
        var arguments: StatementArguments = [name, prefix.unicodeScalars.count, prefix]
        if let (comparison, value) = matching {
            sql += " AND value \(comparison.rawValue) ?"
            arguments += [value]
        }
        return try database.read { database in
            try Row.fetchAll(database, sql: sql + " ORDER BY uri", arguments: arguments)
                .map { ($0["uri"], $0["value"]) }
        }
    }
}

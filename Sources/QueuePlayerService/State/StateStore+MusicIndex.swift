import FoundationEssentials
import GRDB
import QueuePlayer

/// The music folder's index: every MP3 file found in it, with its length and tags, and when it was last updated.
extension StateStore {
    /// What the store holds of the index.
    package struct SavedMusicIndex: Equatable, Sendable {
        /// The music folder the paths are relative to.
        package var folder: String
        /// When its last update ended.
        package var updated: Date
        package var songs: [IndexedSong]
    }

    /// The index, or nil when none was ever saved.
    package func musicIndex() throws -> SavedMusicIndex? {
        try database.read { database in
            guard let index = try Row.fetchOne(database, sql: "SELECT folder, updated FROM musicIndex WHERE id = 1")
            else { return nil }
            let songs = try Row.fetchAll(database, sql: "SELECT * FROM song ORDER BY path").map(Self.song(from:))
            return SavedMusicIndex(
                folder: index["folder"], updated: Date(timeIntervalSince1970: index["updated"]), songs: songs)
        }
    }

    /// Records an update of the index of `folder` that ended at `updated`, in one transaction: `changed` songs
    /// written (new or read again), the songs at `removed` paths deleted. Songs of another folder are all deleted.
    package func saveMusicIndex(folder: String, updated: Date, changed: [IndexedSong], removed: [String]) throws {
        try database.write { database in
            let previous = try String.fetchOne(database, sql: "SELECT folder FROM musicIndex WHERE id = 1")
            if previous != nil, previous != folder { try database.execute(sql: "DELETE FROM song") }
            try database.execute(
                sql: "INSERT OR REPLACE INTO musicIndex (id, folder, updated) VALUES (1, ?, ?)",
                arguments: [folder, updated.timeIntervalSince1970])
            let delete = try database.makeStatement(sql: "DELETE FROM song WHERE path = ?")
            for path in removed { try delete.execute(arguments: [path]) }
            let columns = ["path", "modified", "frames", "rate"] + IndexedSong.storedTags
            let insert = try database.makeStatement(
                sql: "INSERT OR REPLACE INTO song (\(columns.joined(separator: ", "))) VALUES "
                    + "(\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))")
            for song in changed {
                let tags = song.description.metadata
                let artists: String? =
                    tags.artists.isEmpty ? nil : tags.artists.joined(separator: String(IndexedSong.valueSeparator))
                let values: [(any DatabaseValueConvertible)?] = [
                    song.path, song.modified.timeIntervalSince1970, song.description.frameCount,
                    song.description.format.sampleRate, tags.title, artists, tags.album, tags.albumArtist, tags.track,
                    tags.disc, tags.date, tags.genre, tags.composer,
                ]
                try insert.execute(arguments: StatementArguments(values))
            }
        }
    }

    private static func song(from row: Row) -> IndexedSong {
        var metadata = ItemMetadata(
            title: row["title"],
            artists: (row["artists"] as String?)?.split(separator: IndexedSong.valueSeparator).map(String.init) ?? [],
            album: row["album"])
        metadata.albumArtist = row["albumArtist"]
        metadata.track = row["track"]
        metadata.disc = row["disc"]
        metadata.date = row["date"]
        metadata.genre = row["genre"]
        metadata.composer = row["composer"]
        return IndexedSong(
            path: row["path"], modified: Date(timeIntervalSince1970: row["modified"]),
            description: ItemDescription(
                format: .stereo(sampleRate: max(1, row["rate"] as Int)), frameCount: row["frames"],
                metadata: metadata))
    }
}

import FoundationEssentials
import QueuePlayer

/// One MP3 file of the music folder as its index keeps it: where it is, when it last changed, and what
/// ``PlayerItem/describe(_:)`` read of it.
///
/// A value type, safe to pass between threads.
package struct IndexedSong: Equatable, Sendable {
    /// The file's path relative to the music folder (`Artist/Album/01 Song.mp3`).
    package var path: String
    /// The file's time of change when it was read.
    package var modified: Date
    package var description: ItemDescription

    package init(path: String, modified: Date, description: ItemDescription) {
        self.path = path
        self.modified = modified
        self.description = description
    }

    /// The metadata's tags as the store's `song` table names its columns (`artists` holds every artist, separated by
    /// ``valueSeparator``).
    static let storedTags = ["title", "artists", "album", "albumArtist", "track", "disc", "date", "genre", "composer"]

    /// What separates the values of a tag with several (the artists) in the store: the unit separator, which no tag
    /// text holds.
    static let valueSeparator: Character = "\u{1F}"

    /// The folder the file is in, relative to the music folder; empty at the top.
    package var folder: Substring {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return path[..<slash]
    }

    /// The length in seconds.
    package var seconds: Double { description.duration.seconds }
}

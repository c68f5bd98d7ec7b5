import FoundationEssentials

/// One queued item: a file, and an id that stays the same for as long as the entry is queued.
///
/// A value type, safe to pass between threads. Two entries for the same file are distinct entries.
public struct QueueEntry: Hashable, Sendable, Identifiable, CustomStringConvertible {
    /// Unique within one player; assigned in queue order.
    public let id: Int
    /// The file's path. An entry keeps the path rather than a `URL`, which costs three times its memory: a queue of
    /// ten thousand entries is held for as long as the daemon runs.
    public let path: String

    /// Creates an entry for the file at `url`. Players assign ids; a restored queue keeps its own.
    public init(id: Int, url: URL) {
        self.init(id: id, path: url.path)
    }

    /// Creates an entry for the file at `path`.
    public init(id: Int, path: String) {
        self.id = id
        self.path = path
    }

    /// The file to play, as a file URL made from ``path`` on each call.
    public var url: URL { URL(itemPath: path) }

    /// The file name (`URL.lastPathComponent`), as the seed's label shows it.
    public var displayName: String { url.lastPathComponent }

    public var description: String { "#\(id) \(path)" }
}

extension URL {
    /// The file URL of a queued item's path: always a file, so the file system is not asked whether it is a folder.
    init(itemPath path: String) {
        self.init(filePath: path, directoryHint: .notDirectory)
    }
}

/// What is known about an entry once its file has been opened: format, exact length and tags.
///
/// A value type, safe to pass between threads.
public struct OpenedEntry: Hashable, Sendable {
    /// The entry this describes.
    public let entry: QueueEntry
    /// The decoded format (always stereo).
    public let format: AudioFormat
    /// The exact length in frames, gapless.
    public let frameCount: Int
    /// The tags.
    public let metadata: ItemMetadata

    /// Creates item information.
    public init(entry: QueueEntry, format: AudioFormat, frameCount: Int, metadata: ItemMetadata) {
        self.entry = entry
        self.format = format
        self.frameCount = frameCount
        self.metadata = metadata
    }

    /// The length in seconds.
    public var duration: Double { format.seconds(forFrames: frameCount) }
}

import FoundationEssentials

/// One queued item: a file or a remote item's URL, and an id that stays the same for as long as the entry is queued.
///
/// A value type, safe to pass between threads. Two entries for the same file are distinct entries.
public struct QueueEntry: Hashable, Sendable, Identifiable, CustomStringConvertible {
    /// Unique within one player; assigned in queue order.
    public let id: Int
    /// Where the item is: a file's path, or a remote item's whole `http` or `https` URL. An entry keeps text rather
    /// than a `URL`, which costs three times its memory: a queue of ten thousand entries is held for as long as the
    /// daemon runs.
    public let location: String

    /// Creates an entry for the item at `url`. Players assign ids; a restored queue keeps its own.
    public init(id: Int, url: URL) {
        self.init(id: id, location: url.itemLocation)
    }

    /// Creates an entry for the item at `location` (a file's path, or an `http` or `https` URL).
    public init(id: Int, location: String) {
        self.id = id
        self.location = location
    }

    /// The item to play, as a URL made from ``location`` on each call: a file URL, or the remote item's URL.
    public var url: URL { URL(itemLocation: location) }

    /// True when the entry is a file (its location a path), false for a remote item.
    public var isFile: Bool { Self.isFileLocation(location) }

    /// True when `location`, as an entry keeps it, is a file's path rather than a remote item's URL.
    package static func isFileLocation(_ location: String) -> Bool { location.hasPrefix("/") }

    /// The file name (`URL.lastPathComponent`), as the seed's label shows it.
    public var displayName: String { url.lastPathComponent }

    public var description: String { "#\(id) \(location)" }
}

extension URL {
    /// The URL of a queued item's location: an `http` or `https` URL as written, else a file URL (always a file, so
    /// the file system is not asked whether it is a folder).
    package init(itemLocation location: String) {
        if URL.isRemoteItemLocation(location), let remote = URL(string: location) {
            self = remote
        } else {
            self.init(filePath: location, directoryHint: .notDirectory)
        }
    }

    /// True for the text of an `http` or `https` URL: an item fetched from a server rather than read from a file.
    package static func isRemoteItemLocation(_ location: String) -> Bool {
        location.hasPrefix("http://") || location.hasPrefix("https://")
    }

    /// True for an `http` or `https` URL.
    package var isRemoteItem: Bool { scheme == "http" || scheme == "https" }

    /// What a queue keeps of an item's URL: a file's path, or a remote item's whole URL.
    package var itemLocation: String { isRemoteItem ? absoluteString : path }
}

/// What is known about an entry once its file has been opened: format, exact length and tags.
///
/// A value type, safe to pass between threads.
public struct OpenedEntry: Hashable, Sendable {
    /// The entry this describes.
    public let entry: QueueEntry
    /// The decoded format (always stereo).
    public let format: AudioFormat
    /// The exact length in frames, gapless; `Int.max` for a live stream.
    public let frameCount: Int
    /// The tags.
    public let metadata: ItemMetadata
    /// True for a live stream (a radio station): it has no length and no end, and cannot be sought in.
    public let isLive: Bool
    /// False when the item cannot be sought in: a live stream, or a remote file whose server does not answer
    /// `Range` requests.
    public let isSeekable: Bool
    /// The bit rate of the encoded audio, in bits a second (`AVAssetTrack.estimatedDataRate`): a constant bit rate
    /// file's rate, a variable one's mean, a live stream's first frame's; nil when not known.
    public internal(set) var estimatedDataRate: Int?

    /// Creates item information, with no ``estimatedDataRate``.
    public init(
        entry: QueueEntry, format: AudioFormat, frameCount: Int, metadata: ItemMetadata, isLive: Bool = false,
        isSeekable: Bool = true
    ) {
        self.entry = entry
        self.format = format
        self.frameCount = frameCount
        self.metadata = metadata
        self.isLive = isLive
        self.isSeekable = isSeekable && !isLive
    }

    /// The length in seconds; infinity for a live stream.
    public var duration: Double { isLive ? .infinity : format.seconds(forFrames: frameCount) }
}

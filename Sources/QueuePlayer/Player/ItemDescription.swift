import FoundationEssentials
import Logging

/// What a file holds, read without playing it: its exact length, its format and its tags, as AVFoundation's
/// `AVURLAsset` loads `duration` and `metadata`. What a music library's index keeps of each file.
///
/// A value type, safe to pass between threads.
public struct ItemDescription: Hashable, Sendable {
    /// The decoded format: the file's sample rate, always as stereo (as the player decodes it).
    public let format: AudioFormat
    /// The exact gapless length in frames at ``format``'s rate.
    public let frameCount: Int
    /// The tags.
    public let metadata: ItemMetadata

    /// Creates a description from what is already known.
    public init(format: AudioFormat, frameCount: Int, metadata: ItemMetadata) {
        self.format = format
        self.frameCount = frameCount
        self.metadata = metadata
    }

    /// The exact length, in the file's sample rate.
    public var duration: MediaTime {
        MediaTime(value: Int64(frameCount), timescale: Int32(format.sampleRate))
    }
}

extension PlayerItem {
    /// Reads the local file at `url` as a player opens it (its exact length from its LAME header, or from a scan of
    /// the whole file when it has none) and its tags, and closes it. Throws the ``DecoderError`` a player would, naming
    /// the file and what to do, when it is missing, unreadable or not MPEG audio. Any thread; it blocks for the
    /// reading, which for a file without a LAME header is the whole file (a few milliseconds for a song). A remote
    /// item is refused: its length and tags are known once it plays.
    public static func describe(_ url: URL) throws(DecoderError) -> ItemDescription {
        guard !url.isRemoteItem else {
            throw DecoderError(
                .unreadable, url: url, reason: "only a local file can be described without playing it",
                suggestion: "Queue the URL in a player; its item's duration and metadata are known once it is ready")
        }
        let decoder = try MPG123Decoder(url: url, logger: Logger(label: "describe") { _ in SwiftLogNoOpLogHandler() })
        return ItemDescription(format: decoder.format, frameCount: decoder.frameCount, metadata: decoder.metadata)
    }
}

/// A picture a file's tag holds (an ID3v2 `APIC` frame): a cover, most often.
///
/// A value type, safe to pass between threads.
public struct ItemPicture: Hashable, Sendable {
    /// What the picture shows, as ID3v2 numbers it: 3 is the front cover, 4 the back, 0 anything else.
    public let kind: Int
    /// The image's MIME type, as the tag gives it (`image/jpeg`, `image/png`); empty when it gives none.
    public let mimeType: String
    /// The image file's bytes.
    public let bytes: [UInt8]

    /// Creates a picture.
    public init(kind: Int, mimeType: String, bytes: [UInt8]) {
        self.kind = kind
        self.mimeType = mimeType
        self.bytes = bytes
    }

    /// ID3v2's number for a front cover.
    public static let frontCoverKind = 3
}

/// A key and a value that a file's tag holds beyond the named fields of ``ItemMetadata``: an ID3v2 user-defined
/// text frame (`TXXX`), such as `replaygain_track_gain` or `MusicBrainz Album Id` (MPD's `readcomments` lists them).
///
/// A value type, safe to pass between threads.
public struct ItemComment: Sendable, Hashable {
    /// The frame's description: what the value is.
    public let key: String
    /// The frame's text (its first, when it holds several).
    public let value: String

    /// A comment saying `value` of `key`.
    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

extension PlayerItem {
    /// The comments in the tag of the local file at `url` (``ItemComment``), in the tag's order: none when it has
    /// none. Throws the ``DecoderError`` a player would, naming the file, when it is missing, unreadable or not MPEG
    /// audio. Any thread; it reads the file's tag and first frame.
    public static func comments(in url: URL) throws(DecoderError) -> [ItemComment] {
        try requireLocalFile(url, toRead: "comments")
        return try MPG123Decoder.comments(in: url)
    }

    /// The pictures in the tag of the local file at `url`, in the tag's order: none when it has none. Throws the
    /// ``DecoderError`` a player would, naming the file, when it is missing, unreadable or not MPEG audio. Any thread;
    /// it reads the file's tag and first frame.
    public static func pictures(in url: URL) throws(DecoderError) -> [ItemPicture] {
        try requireLocalFile(url, toRead: "pictures")
        return try MPG123Decoder.pictures(in: url)
    }

    /// Refuses a remote `url`, naming what was to be read of it: a tag is read without playing only from a file.
    private static func requireLocalFile(_ url: URL, toRead what: String) throws(DecoderError) {
        guard url.isRemoteItem else { return }
        throw DecoderError(
            .unreadable, url: url, reason: "only a local file's \(what) can be read without playing it",
            suggestion: "Download the file first")
    }
}

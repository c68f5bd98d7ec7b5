/// The descriptive tags of one item, read from its ID3v2 tag or, failing that, its ID3v1 tag; for a stream, its
/// station's name and the title its server last sent (ICY).
///
/// A value type, safe to pass between threads. Every field is optional because files often lack tags.
public struct ItemMetadata: Hashable, Sendable {
    /// The title (ID3v2 `TIT2`, ID3v1 title).
    public var title: String?
    /// Every artist named (ID3v2 `TPE1`, which may hold several values; ID3v1 artist). Empty when untagged.
    public var artists: [String]
    /// The album (ID3v2 `TALB`, ID3v1 album).
    public var album: String?
    /// A stream's station (its server's `icy-name`); its ``title`` is then the ICY `StreamTitle` being heard.
    public var stationName: String?

    /// Creates metadata from already-decoded strings.
    public init(title: String? = nil, artists: [String] = [], album: String? = nil, stationName: String? = nil) {
        self.title = title
        self.artists = artists
        self.album = album
        self.stationName = stationName
    }

    /// True when no tag supplied anything.
    public var isEmpty: Bool { title == nil && artists.isEmpty && album == nil && stationName == nil }

    /// Fills the fields this value lacks from `fallback` (used to layer ID3v2 over ID3v1).
    func filling(from fallback: ItemMetadata) -> ItemMetadata {
        ItemMetadata(
            title: title ?? fallback.title,
            artists: artists.isEmpty ? fallback.artists : artists,
            album: album ?? fallback.album,
            stationName: stationName ?? fallback.stationName
        )
    }
}

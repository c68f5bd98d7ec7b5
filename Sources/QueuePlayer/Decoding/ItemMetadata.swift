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
    /// The album's artist (ID3v2 `TPE2`), when it differs from the track's.
    public var albumArtist: String?
    /// The track number as the tag writes it, often with the album's count (`3/12`) (ID3v2 `TRCK`, ID3v1.1's track).
    public var track: String?
    /// The disc number as the tag writes it (`1/2`) (ID3v2 `TPOS`).
    public var disc: String?
    /// The date of release as the tag writes it, a year or an ISO 8601 date (ID3v2.4 `TDRC`, ID3v2.3 `TYER`, ID3v1's
    /// year).
    public var date: String?
    /// The genre (ID3v2 `TCON`, ID3v1's genre number), a number in parentheses or alone replaced by the ID3v1 genre it
    /// names (`(17)` is `Rock`).
    public var genre: String?
    /// The composer (ID3v2 `TCOM`).
    public var composer: String?

    /// Creates metadata from already-decoded strings.
    public init(title: String? = nil, artists: [String] = [], album: String? = nil, stationName: String? = nil) {
        self.title = title
        self.artists = artists
        self.album = album
        self.stationName = stationName
    }

    /// True when no tag supplied anything.
    public var isEmpty: Bool { self == ItemMetadata() }

    /// Fills the fields this value lacks from `fallback` (used to layer ID3v2 over ID3v1).
    func filling(from fallback: ItemMetadata) -> ItemMetadata {
        var filled = ItemMetadata(
            title: title ?? fallback.title,
            artists: artists.isEmpty ? fallback.artists : artists,
            album: album ?? fallback.album,
            stationName: stationName ?? fallback.stationName
        )
        filled.albumArtist = albumArtist ?? fallback.albumArtist
        filled.track = track ?? fallback.track
        filled.disc = disc ?? fallback.disc
        filled.date = date ?? fallback.date
        filled.genre = genre ?? fallback.genre
        filled.composer = composer ?? fallback.composer
        return filled
    }
}

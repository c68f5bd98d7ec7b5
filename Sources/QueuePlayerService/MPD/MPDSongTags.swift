import QueuePlayer
import QueuePlayerControl

/// The tags of a song as MPD names and prints them, read from its ``ItemMetadata``.
enum MPDSongTags {
    /// The order MPD prints a song's tags in (the order its ID3 reader finds them).
    private static let printOrder: [MPDTags.Tag] = [
        .artist, .albumArtist, .title, .album, .track, .date, .genre, .composer, .disc, .name,
    ]

    /// The values of `tag` in `metadata`: none when it lacks it.
    static func values(of tag: MPDTags.Tag, in metadata: ItemMetadata) -> [String] {
        let value: String? =
            switch tag {
            case .artist: nil
            case .album: metadata.album
            case .albumArtist: metadata.albumArtist
            case .title: metadata.title
            case .track: metadata.track.flatMap(decimal)
            case .name: metadata.stationName
            case .genre: metadata.genre
            case .date: metadata.date
            case .composer: metadata.composer
            case .disc: metadata.disc.flatMap(decimal)
            }
        return tag == .artist ? metadata.artists : value.map { [$0] } ?? []
    }

    /// A track or disc number as MPD keeps it: its digits, without leading zeros or what follows (`03/12` is `3`);
    /// nil when that leaves nothing.
    private static func decimal(_ text: String) -> String? {
        let digits = text.drop { $0 == "0" }.prefix { $0.isASCII && $0.isNumber }
        return digits.isEmpty ? nil : String(digits)
    }

    /// The values of the tag MPD names `name` in `song`, as its filters and `list` see them: `AlbumArtist` falls back
    /// to `Artist`; a tag the daemon does not read has none.
    static func values(of name: String, in song: IndexedSong) -> [String] {
        guard let tag = MPDTags.Tag(mpdName: name) else { return [] }
        let found = values(of: tag, in: song.description.metadata)
        return found.isEmpty && tag == .albumArtist ? values(of: .artist, in: song.description.metadata) : found
    }

    /// Every tag value of `song`, and its path: what `any` compares with.
    static func allValues(of song: IndexedSong) -> [String] {
        [song.path] + MPDTags.Tag.allCases.flatMap { values(of: $0, in: song.description.metadata) }
    }

    /// Tags given to a queued song (`addtagid`) as song lines, those the daemon reports and `tags` wants, in the order
    /// given, as MPD prints them.
    static func lines(given: [EntryTag], wanted tags: MPDTags) -> String {
        given.filter { MPDTags.Tag(mpdName: $0.name).map(tags.wants) ?? false }
            .map { MPDCommandRunner.field($0.name, $0.value) }.joined()
    }

    /// `metadata`'s tags as song lines, those `tags` wants, in MPD's order.
    static func lines(_ metadata: ItemMetadata, wanted tags: MPDTags) -> String {
        printOrder.filter(tags.wants).flatMap { tag in
            values(of: tag, in: metadata).map { MPDCommandRunner.field(tag.rawValue, $0) }
        }.joined()
    }
}

import Synchronization

/// The song tags the daemon reports, named as MPD names them, and which of them a connection asked for
/// (`tagtypes clear`, `all`, `enable`, `disable`).
///
/// Threading: any thread; a connection's commands run one at a time.
package final class MPDTags: Sendable {
    /// A tag MPD clients may ask for.
    /// In MPD's order of tag types (what `tagtypes` lists).
    package enum Tag: String, CaseIterable, Sendable {
        case artist = "Artist"
        case album = "Album"
        case albumArtist = "AlbumArtist"
        case title = "Title"
        case track = "Track"
        /// A station's name (`icy-name`).
        case name = "Name"
        case genre = "Genre"
        case date = "Date"
        case composer = "Composer"
        case disc = "Disc"

        /// The tag an MPD client names `name`, in any letter case.
        init?(mpdName name: String) {
            guard let tag = Self.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
                return nil
            }
            self = tag
        }
    }

    /// Every tag name MPD 0.23 knows, as it spells them: a client may enable or disable any of them, sent or not.
    static let mpdNames = [
        "Artist", "ArtistSort", "Album", "AlbumSort", "AlbumArtist", "AlbumArtistSort", "Title", "Track", "Name",
        "Genre", "Date", "OriginalDate", "Composer", "ComposerSort", "Performer", "Conductor", "Work", "Movement",
        "MovementNumber", "Ensemble", "Location", "Grouping", "Comment", "Disc", "Label", "MUSICBRAINZ_ARTISTID",
        "MUSICBRAINZ_ALBUMID", "MUSICBRAINZ_ALBUMARTISTID", "MUSICBRAINZ_TRACKID", "MUSICBRAINZ_RELEASETRACKID",
        "MUSICBRAINZ_WORKID",
    ]

    /// The MPD tag name `word` is, in any letter case, as MPD spells it; nil when MPD knows no such tag.
    static func mpdName(_ word: String) -> String? {
        mpdNames.first { $0.lowercased() == word.lowercased() }
    }

    private let enabled = Mutex(Set(Tag.allCases))

    package init() {}

    /// True when the connection wants `tag` in its songs.
    package func wants(_ tag: Tag) -> Bool { enabled.withLock { $0.contains(tag) } }

    /// MPD's `tagtypes [SUBCOMMAND [NAME...]]`: with no argument the tags supported; otherwise changes which are sent.
    func command(_ arguments: [String]) throws(MPDError) -> String {
        guard let subcommand = arguments.first else { return Tag.allCases.map { "tagtype: \($0.rawValue)\n" }.joined() }
        let names = arguments.dropFirst()
        switch subcommand {
        case "all", "clear":
            guard names.isEmpty else { throw MPDError(.argument, "Too many arguments") }
            enabled.withLock { $0 = subcommand == "all" ? Set(Tag.allCases) : [] }
        case "enable", "disable":
            guard !names.isEmpty else { throw MPDError(.argument, "Not enough arguments") }
            var tags: Set<Tag> = []
            for name in names {
                guard Self.mpdName(name) != nil else { throw MPDError(.argument, "Unknown tag type") }
                if let tag = Tag(mpdName: name) { tags.insert(tag) }
            }
            enabled.withLock { subcommand == "enable" ? $0.formUnion(tags) : $0.subtract(tags) }
        default:
            throw MPDError(.argument, "Unknown sub command")
        }
        return ""
    }
}

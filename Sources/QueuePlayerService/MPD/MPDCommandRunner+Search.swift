import FoundationEssentials
import QueuePlayer
import QueuePlayerControl

/// Searching the music folder's index (`find`, `search`, `findadd`, `searchadd`, `count`, `list`) and the queue
/// (`playlistfind`, `playlistsearch`).
extension MPDCommandRunner {
    /// MPD's `find FILTER [sort TYPE] [window START:END]` (`search`, when `foldsCase`): the matching songs as
    /// `lsinfo` prints them, in the index's order or sorted by a tag or `Last-Modified` (`-TYPE`: descending).
    func find(_ arguments: [String], foldsCase: Bool) throws(MPDError) -> String {
        try selection(arguments, foldsCase: foldsCase).map(indexedSong).joined()
    }

    /// MPD's `findadd FILTER [sort TYPE] [window START:END] [position POS]` (`searchadd`, when `foldsCase`): the
    /// matching songs added to the queue, at its end or at `POS` (absolute, or `+N`/`-N` from the current song).
    func findAdd(_ arguments: [String], foldsCase: Bool) throws(MPDError) -> String {
        var arguments = arguments
        let position = Self.takePosition(from: &arguments)
        let queue = controller.mpdState().queue
        let index = try position.map { text throws(MPDError) in try Self.insertionIndex(text, in: queue) }
        let songs = try selection(arguments, foldsCase: foldsCase)
        guard !songs.isEmpty else { return "" }
        let items = songs.map { "\(musicFolder.path)/\($0.path)" }
        let reply = controller.execute(Self.addition(of: items, at: index, in: queue), id: nil)
        guard reply.ok == true else { throw MPDError(.noExist, reply.error ?? "cannot add the songs found") }
        return ""
    }

    /// The `POS` of a trailing `position POS`, taken off `arguments`; nil without one.
    static func takePosition(from arguments: inout [String]) -> String? {
        guard arguments.count >= 2, arguments[arguments.count - 2] == "position" else { return nil }
        defer { arguments.removeLast(2) }
        return arguments.last
    }

    /// MPD's `playlistfind FILTER` (`playlistsearch`, when `foldsCase`): the queue's songs that match, as
    /// `playlistinfo` prints them. A song of the music index matches by its tags; any other by its name, and the
    /// current one also by what playing it found (a station's name and title).
    func findInQueue(_ arguments: [String], foldsCase: Bool) throws(MPDError) -> String {
        let filter = try MPDSongFilter.parse(arguments, foldsCase: foldsCase)
        let state = controller.mpdState()
        let indexed = index?.current.songs ?? [:]
        let matching = state.queue.indices.filter { position in
            filter.matches(queuedSong(state.queue[position], in: state, indexed: indexed))
        }
        return songs(in: matching, of: state)
    }

    /// `entry` as a filter sees it: its song in the index, else a song named as `playlistinfo` names it.
    private func queuedSong(
        _ entry: QueueEntry, in state: MPDPlayerState, indexed: [String: IndexedSong]
    ) -> IndexedSong {
        let name = musicFolder.name(of: entry.location)
        if entry.isFile, let song = indexed[name] { return song }
        let current = state.snapshot.current.flatMap { $0.id == entry.id ? $0 : nil }
        let description = ItemDescription(
            format: .stereo(sampleRate: 44_100), frameCount: 0,
            metadata: current.map(Self.metadata(of:)) ?? ItemMetadata())
        return IndexedSong(path: name, modified: .distantPast, description: description)
    }

    /// MPD's `count FILTER [group TYPE]`: how many songs match and their length in whole seconds, for each value of
    /// the group's tag when grouped.
    func count(_ arguments: [String]) throws(MPDError) -> String {
        var arguments = arguments[...]
        var group: String?
        if arguments.count >= 2, arguments[arguments.endIndex - 2] == "group" {
            group = try Self.tagName(arguments.last!)
            arguments = arguments.dropLast(2)
        }
        let filter = try arguments.isEmpty ? nil : MPDSongFilter.parse(Array(arguments), foldsCase: false)
        let songs = try database().current.orderedSongs.filter { filter?.matches($0) ?? true }
        let totals = { (songs: [IndexedSong]) in
            "songs: \(songs.count)\nplaytime: \(Int(songs.reduce(0.0) { $0 + $1.seconds }))\n"
        }
        guard let group else { return totals(songs) }
        var groups: [String: [IndexedSong]] = [:]
        for song in songs {
            for value in Self.valuesOrEmpty(of: group, in: song) { groups[value, default: []].append(song) }
        }
        return groups.keys.sorted(by: Self.byteOrder).map { Self.field(group, $0) + totals(groups[$0]!) }.joined()
    }

    /// MPD's `list TYPE [FILTER] [group TYPE...] [window START:END]`: each value of the tag among the matching songs
    /// once, in byte order (a song without it gives the empty value), within each value of the groups (the last
    /// named outermost). `list file [FILTER]` lists the matching songs' files in the index's order. `list album
    /// ARTIST` is MPD 0.12's `list album artist ARTIST`.
    func list(_ arguments: [String]) throws(MPDError) -> String {
        var arguments = arguments[...]
        let first = arguments.removeFirst()
        if ["file", "filename"].contains(first.lowercased()) {
            let filter = try arguments.isEmpty ? nil : MPDSongFilter.parse(Array(arguments), foldsCase: false)
            let songs = try database().current.orderedSongs.filter { filter?.matches($0) ?? true }
            return songs.map { Self.field("file", $0.path) }.joined()
        }
        let type = try Self.tagName(first)
        var window: Range<Int>?
        if arguments.count >= 2, arguments[arguments.endIndex - 2] == "window" {
            window = try MPDArguments.range(arguments.last!, count: Int.max)
            arguments = arguments.dropLast(2)
        }
        var filter: MPDSongFilter?
        if arguments.count == 1, !arguments.first!.hasPrefix("(") {
            guard type == "Album" else { throw MPDError(.argument, "should be \"Album\" for 3 arguments") }
            filter = .tag("Artist", MPDStringMatch(value: arguments.first!, foldsCase: false, position: .whole))
            arguments = []
        }
        var levels: [String] = []
        while arguments.count >= 2, arguments[arguments.endIndex - 2] == "group" {
            let group = try Self.tagName(arguments.last!)
            guard group != type, !levels.contains(group) else { throw MPDError(.argument, "Conflicting group") }
            levels.append(group)
            arguments = arguments.dropLast(2)
        }
        levels.append(type)
        if !arguments.isEmpty { filter = try MPDSongFilter.parse(Array(arguments), foldsCase: false) }
        let songs = try database().current.orderedSongs.filter { filter?.matches($0) ?? true }
        var lines = Self.uniqueValues(songs, levels: levels[...])
        if let window {
            lines = Array(lines[min(window.lowerBound, lines.count)..<min(window.upperBound, lines.count)])
        }
        return lines.joined()
    }

    /// The lines of `list`: each value of the first level's tag, then what the next levels list for its songs.
    /// Only the first level is windowed, so the lines of one value are returned as one.
    private static func uniqueValues(_ songs: [IndexedSong], levels: ArraySlice<String>) -> [String] {
        guard let level = levels.first else { return [] }
        var byValue: [String: [IndexedSong]] = [:]
        for song in songs {
            for value in valuesOrEmpty(of: level, in: song) { byValue[value, default: []].append(song) }
        }
        return byValue.keys.sorted(by: byteOrder).map { value in
            field(level, value) + uniqueValues(byValue[value]!, levels: levels.dropFirst()).joined()
        }
    }

    /// The matching songs of a `find` or `search`, sorted and windowed as its last arguments say.
    func selection(_ arguments: [String], foldsCase: Bool) throws(MPDError) -> [IndexedSong] {
        var arguments = arguments[...]
        var window: Range<Int>?
        if arguments.count >= 2, arguments[arguments.endIndex - 2] == "window" {
            window = try MPDArguments.range(arguments.last!, count: Int.max)
            arguments = arguments.dropLast(2)
        }
        var sort: (key: String, descending: Bool)?
        if arguments.count >= 2, arguments[arguments.endIndex - 2] == "sort" {
            let text = arguments.last!
            let descending = text.hasPrefix("-")
            sort = (try Self.sortKey(String(text.dropFirst(descending ? 1 : 0))), descending)
            arguments = arguments.dropLast(2)
        }
        let filter = try MPDSongFilter.parse(Array(arguments), foldsCase: foldsCase)
        var songs = try database().current.orderedSongs.filter(filter.matches)
        if let sort {
            // Stable, as MPD's: songs that compare equal keep the index's order.
            let keyed = songs.map { (Self.sortValue(of: sort.key, in: $0), $0) }
            let ordered = keyed.enumerated().sorted { first, second in
                let (a, b) = (first.element.0, second.element.0)
                return a == b ? first.offset < second.offset : (a < b) != sort.descending
            }
            songs = ordered.map(\.element.1)
        }
        guard let window else { return songs }
        return Array(songs[min(window.lowerBound, songs.count)..<min(window.upperBound, songs.count)])
    }

    /// The tag MPD names `name`, spelled as MPD spells it; "Unknown tag type" otherwise.
    private static func tagName(_ name: String) throws(MPDError) -> String {
        guard let tag = MPDTags.mpdName(name) else { throw MPDError(.argument, "Unknown tag type: \(name)") }
        return tag
    }

    /// What `sort` names: a song's time of change (`Last-Modified`, in any case).
    private static let lastModified = "Last-Modified"

    /// The tag `sort` names, spelled as MPD spells it, or ``lastModified``; "Unknown sort tag" otherwise.
    private static func sortKey(_ name: String) throws(MPDError) -> String {
        if name.lowercased() == lastModified.lowercased() { return lastModified }
        guard let tag = MPDTags.mpdName(name) else { throw MPDError(.argument, "Unknown sort tag") }
        return tag
    }

    /// What `sort` compares `song` by, as mpd 0.23 does: its time of change to the second (`Last-Modified`), the
    /// number a `Track` or `Disc` value starts with, or any other tag's first value by its bytes.
    private static func sortValue(of key: String, in song: IndexedSong) -> MPDSortValue {
        if key == lastModified { return .number(Int(song.modified.timeIntervalSince1970.rounded(.down))) }
        let value = valuesOrEmpty(of: key, in: song)[0]
        return key == "Track" || key == "Disc" ? .number(leadingInteger(value)) : .text(value)
    }

    /// The integer `text` starts with, as C's `strtol` reads it (blanks, a sign, digits); 0 when there is none.
    private static func leadingInteger(_ text: String) -> Int {
        var rest = text.drop { $0 == " " || $0 == "\t" }[...]
        let negative = rest.first == "-"
        if rest.first == "-" || rest.first == "+" { rest = rest.dropFirst() }
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        let magnitude = Int(digits.prefix(18)) ?? 0
        return negative ? -magnitude : magnitude
    }

    /// The values of the tag named `name` in `song`, or the empty value when it has none.
    private static func valuesOrEmpty(of name: String, in song: IndexedSong) -> [String] {
        let values = MPDSongTags.values(of: name, in: song)
        return values.isEmpty ? [""] : values
    }

    /// MPD's order of tag values: their UTF-8 bytes.
    private static func byteOrder(_ first: String, _ second: String) -> Bool {
        first.utf8.lexicographicallyPrecedes(second.utf8)
    }
}

/// A song's value for `sort`: a number, or a tag's text in MPD's byte order.
private enum MPDSortValue: Equatable, Comparable {
    case number(Int)
    case text(String)

    static func < (first: Self, second: Self) -> Bool {
        switch (first, second) {
        case (.number(let a), .number(let b)): a < b
        case (.text(let a), .text(let b)): a.utf8.lexicographicallyPrecedes(b.utf8)
        case (.number, .text): true
        case (.text, .number): false
        }
    }
}

import FoundationEssentials
import QueuePlayer
import QueuePlayerControl

/// The commands that report: `status`, `currentsong`, the queue's songs, `outputs`.
extension MPDCommandRunner {
    /// MPD's `status`, its fields in MPD 0.23's order. The queue always consumes what it played (`consume: 1`);
    /// `repeat` and `single` are the player's modes; `audio` is the current song's decoded format once it is open,
    /// and `bitrate` its bit rate in kbit/s (0 until then: a variable one's mean, where mpd tells each chunk's);
    /// `error` says why nothing is heard while a remote item waits for its server or the audio server is away.
    func status() -> String {
        let state = controller.mpdState()
        let snapshot = state.snapshot
        var fields: [(String, String)] = [
            ("volume", "\(Self.volumePercent(snapshot))"), ("repeat", snapshot.loop == .none ? "0" : "1"),
            ("random", snapshot.shuffle ? "1" : "0"), ("single", Self.singleField(snapshot)), ("consume", "1"),
            ("partition", "default"),
            ("playlist", "\(versions.version(of: state))"), ("playlistlength", "\(state.queue.count)"),
            ("mixrampdb", "0"), ("state", Self.stateName(snapshot.status)),
        ]
        let position = snapshot.current.flatMap { current in state.queue.firstIndex { $0.id == current.id } }
        if let position {
            fields += [("song", "\(position)"), ("songid", "\(state.queue[position].id)")]
        }
        if snapshot.status != .stopped, let current = snapshot.current {
            let length = current.length ?? 0
            fields += [
                ("time", "\(Int(snapshot.position.rounded())):\(Int(length.rounded()))"),
                ("elapsed", fixedDecimals(snapshot.position, places: 3)),
                ("bitrate", "\(state.bitRate.map { ($0 + 500) / 1000 } ?? 0)"),
            ]
            if let length = current.length, length > 0 { fields.append(("duration", fixedDecimals(length, places: 3))) }
            if let format = state.format { fields.append(("audio", Self.audioFormat(format))) }
        }
        if let job = index?.runningJob { fields.append(("updating_db", "\(job)")) }
        if let error = state.error { fields.append(("error", error)) }
        if let position, let next = Self.nextPosition(after: position, in: state) {
            fields += [("nextsong", "\(next)"), ("nextsongid", "\(state.queue[next].id)")]
        }
        return fields.map { "\($0.0): \($0.1)\n" }.joined()
    }

    /// The song that plays after the one at `position`, as mpd names it: itself when it repeats (`single` with
    /// `repeat`, or `repeat` with nothing after it, until its repetition is queued), else the one after it.
    private static func nextPosition(after position: Int, in state: MPDPlayerState) -> Int? {
        let loop = state.snapshot.loop
        let next = position + 1
        if loop == .track || (loop == .playlist && next == state.queue.count) { return position }
        return next < state.queue.count ? next : nil
    }

    private static func stateName(_ status: PlaybackState) -> String {
        switch status {
        case .playing: "play"
        case .paused: "pause"
        case .stopped: "stop"
        }
    }

    /// MPD's `currentsong`: the current song, or nothing.
    func currentSong() -> String {
        let state = controller.mpdState()
        guard let current = state.snapshot.current,
            let position = state.queue.firstIndex(where: { $0.id == current.id })
        else { return "" }
        return song(state.queue[position], at: position, in: state)
    }

    /// MPD's `playlistinfo [POS|START:END]`.
    func playlistInfo(_ range: String?) throws(MPDError) -> String {
        let state = controller.mpdState()
        let positions = try range.map { text throws(MPDError) in try MPDArguments.range(text, count: state.queue.count)
        }
        return songs(in: positions ?? state.queue.indices, of: state)
    }

    /// MPD's `playlist` (deprecated there for `playlistinfo`): each queued song as `POS:file: NAME`.
    func playlist() -> String {
        let state = controller.mpdState()
        return state.queue.enumerated().map { "\($0.offset):file: \(musicFolder.name(of: $0.element.location))\n" }
            .joined()
    }

    /// MPD's `playlistid [ID]`.
    func playlistID(_ id: String?) throws(MPDError) -> String {
        let state = controller.mpdState()
        guard let id else { return songs(in: state.queue.indices, of: state) }
        let position = try position(ofID: id, in: state.queue)
        return song(state.queue[position], at: position, in: state)
    }

    /// MPD's `plchanges VERSION [START:END]` and `plchangesposid`: the queue's songs when it changed since
    /// `version`, else none. Versions are not kept per song, so a change sends every song: more than MPD sends,
    /// never less.
    func changes(since version: String, range: String?, positionsOnly: Bool) throws(MPDError) -> String {
        let since = try MPDArguments.unsigned(version)
        let state = controller.mpdState()
        let positions =
            try range.map { text throws(MPDError) in try MPDArguments.range(text, count: state.queue.count) }
            ?? state.queue.indices
        guard since != versions.version(of: state) else { return "" }
        if positionsOnly { return positions.map { "cpos: \($0)\nId: \(state.queue[$0].id)\n" }.joined() }
        return songs(in: positions, of: state)
    }

    /// MPD's `outputs`: the one output the daemon plays to, always enabled.
    func outputs() -> String {
        "outputid: 0\noutputname: QueuePlayer\nplugin: queueplayer\noutputenabled: 1\n"
    }

    /// The queue's songs at `positions`, as `playlistinfo` prints them.
    func songs(in positions: some Sequence<Int>, of state: MPDPlayerState) -> String {
        let indexed = index?.current.songs ?? [:]
        return positions.map { song(state.queue[$0], at: $0, in: state, indexed: indexed) }.joined()
    }

    /// What tags `given` to an item show of it, as the snapshot takes them when the item says nothing of itself.
    static func metadata(given: [EntryTag]) -> ItemMetadata {
        ItemMetadata(
            title: given.values(named: "Title").first, artists: given.values(named: "Artist"),
            album: given.values(named: "Album").first, stationName: given.values(named: "Name").first)
    }

    /// The tags of the current song `current` as playing it found them (a station's name and title).
    static func metadata(of current: EntryDetails) -> ItemMetadata {
        ItemMetadata(
            title: current.title, artists: current.artists, album: current.album, stationName: current.stationName)
    }

    /// One song as MPD prints a queued one: `file`, the file's time of change, its tags and length (from the music
    /// folder's index; else, for the current song, what playing it found), `Pos`, `Id` and `Prio`.
    private func song(
        _ entry: QueueEntry, at position: Int, in state: MPDPlayerState, indexed: [String: IndexedSong]? = nil
    ) -> String {
        let name = musicFolder.name(of: entry.location)
        let range = state.ranges[entry.id]
        if let song = (indexed ?? index?.current.songs)?[name], entry.isFile {
            return indexedSong(song, playing: range) + Self.place(of: entry, at: position, in: state)
        }
        var text = Self.songFile(name, at: entry.location, playing: range)
        let given = state.tags[entry.id] ?? []
        if let current = state.snapshot.current, current.id == entry.id {
            // The item's own tags, when it has any, replace those given to it (MPD's stream tags do).
            let metadata = Self.metadata(of: current)
            let ownTags = given.isEmpty || metadata != Self.metadata(given: given)
            text += ownTags ? MPDSongTags.lines(metadata, wanted: tags) : MPDSongTags.lines(given: given, wanted: tags)
            if let length = current.length, length > 0 { text += Self.length(length) }
        } else {
            text += MPDSongTags.lines(given: given, wanted: tags)
        }
        return text + Self.place(of: entry, at: position, in: state)
    }

    /// The lines that end a queued song: its `Pos`, its `Id` and, when it has one, its `Prio`.
    private static func place(of entry: QueueEntry, at position: Int, in state: MPDPlayerState) -> String {
        let place = "Pos: \(position)\nId: \(entry.id)\n"
        guard let priority = state.priorities[entry.id] else { return place }
        return place + "Prio: \(priority)\n"
    }

    /// A song's `file` line, named `name`, its `Range` when it plays only `range` of itself, and for a file at
    /// `location` its time of change.
    static func songFile(_ name: String, at location: String, playing range: MediaTimeRange? = nil) -> String {
        field("file", name) + (range.map(rangeLine) ?? "")
            + (QueueEntry.isFileLocation(location) ? modified(location) : "")
    }

    /// The `Last-Modified` line of the file or folder at `path`; nothing when it cannot be read.
    static func modified(_ path: String) -> String {
        guard let date = try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date else {
            return ""
        }
        return lastModified(date)
    }

    /// A `Last-Modified` line saying `date`, in ISO 8601 to the second, as MPD writes it.
    static func lastModified(_ date: Date) -> String {
        "Last-Modified: \(Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)).formatted(.iso8601))\n"
    }

    /// A `KEY: VALUE` line; a line break inside the value (a tag may hold one) would end the line early, so it is
    /// sent as a space.
    static func field(_ key: String, _ value: String) -> String {
        "\(key): \(value.replacing("\n", with: " ").replacing("\r", with: " "))\n"
    }

    /// The position of the song with `id`; "No such song" when none has it.
    func position(ofID id: String, in queue: [QueueEntry]) throws(MPDError) -> Int {
        let id = try MPDArguments.unsigned(id)
        guard let position = queue.firstIndex(where: { $0.id == id }) else { throw MPDError(.noExist, "No such song") }
        return position
    }
}

import FoundationEssentials
import QueuePlayer
import QueuePlayerControl

/// The music folder's index as MPD's database: `update`, `rescan`, `lsinfo`, `listall`, `listallinfo`, `stats`.
extension MPDCommandRunner {
    /// The index, or MPD's answer when it has none.
    func database() throws(MPDError) -> MusicIndex {
        guard let index else { throw MPDError(.noExist, "No database") }
        return index
    }

    /// MPD's `update [URI]` and `rescan [URI]`: queues an update of the folder or file (all of the music folder by
    /// default), reading every file again for `rescan`; answers the job's id.
    func update(_ uri: String?, rereadingAll: Bool) throws(MPDError) -> String {
        let index = try database()
        var path = uri ?? ""
        if path == "/" { path = "" }
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !path.hasPrefix("/"), !components.contains(".."), !components.contains("."),
            path.isEmpty || !components.contains("")
        else { throw MPDError(.argument, "Malformed path") }
        do throws(MusicIndex.UpdateRefusal) {
            return "updating_db: \(try index.update(path, rereadingAll: rereadingAll))\n"
        } catch {
            throw MPDError(.updateAlready, "Update queue is full")
        }
    }

    /// MPD's `lsinfo [URI]`: an indexed folder's songs, its subfolders and at the top the stored playlists; an indexed
    /// song; or, for a local client, any file, named by its path.
    func listInfo(_ uri: String?) throws(MPDError) -> String {
        let path = uri == "/" ? "" : uri ?? ""
        if path.hasPrefix("/") || path.lowercased().hasPrefix("file://") {
            let location = try musicFolder.item(path, isLocalClient: isLocalClient)
            return Self.songFile(musicFolder.name(of: location), at: location)
        }
        let contents = try database().current
        if let song = contents.songs[path] { return indexedSong(song) }
        guard contents.isFolder(path) else { throw MPDError(.noExist, "No such directory") }
        var text = ""
        contents.walk(
            path, recursive: false, folder: { text += folderLines($0, withDate: true) },
            song: { text += indexedSong($0) })
        return text + (path.isEmpty ? listPlaylists() : "")
    }

    /// MPD's `listall [URI]` (`withInfo`: `listallinfo`): a folder (but the top) and everything under it, each song
    /// and folder as `lsinfo` shows them (with `listall`, by name alone).
    func listAll(_ uri: String?, withInfo: Bool) throws(MPDError) -> String {
        let path = uri == "/" ? "" : uri ?? ""
        let contents = try database().current
        if let song = contents.songs[path] { return withInfo ? indexedSong(song) : Self.field("file", song.path) }
        guard contents.isFolder(path) else { throw MPDError(.noExist, "No such directory") }
        var text = path.isEmpty ? "" : folderLines(path, withDate: withInfo)
        contents.walk(
            path, recursive: true, folder: { text += folderLines($0, withDate: withInfo) },
            song: { text += withInfo ? indexedSong($0) : Self.field("file", $0.path) })
        return text
    }

    /// MPD's `stats`: the daemon's time up and playing, and the index's artists, albums, songs, their length and
    /// the end of its last update.
    func stats() throws(MPDError) -> String {
        let contents = try database().current
        let songs = contents.songs.values
        let artists = Set(songs.flatMap { $0.description.metadata.artists })
        let albums = Set(songs.compactMap { $0.description.metadata.album })
        let seconds = songs.reduce(0.0) { $0 + $1.seconds }
        var text = "uptime: \(playTime.uptimeSeconds)\nplaytime: \(playTime.playingSeconds)\n"
        text += "artists: \(artists.count)\nalbums: \(albums.count)\nsongs: \(songs.count)\n"
        text += "db_playtime: \(Int(seconds))\n"
        if let updated = contents.updated { text += "db_update: \(Int(updated.timeIntervalSince1970))\n" }
        return text
    }

    /// An indexed song as MPD prints a song of its database: `file`, `Last-Modified`, `Format`, the tags this
    /// connection wants, `Time` and `duration`.
    func indexedSong(_ song: IndexedSong) -> String {
        indexedSong(song, playing: nil)
    }

    /// `song` as ``indexedSong(_:)`` prints it, queued to play only `range` of itself: its `Range`, and the part's
    /// length.
    func indexedSong(_ song: IndexedSong, playing range: MediaTimeRange?) -> String {
        let seconds = range.map { Self.length(of: $0, inSongOf: song.seconds) } ?? song.seconds
        return Self.field("file", song.path) + (range.map(Self.rangeLine) ?? "") + Self.lastModified(song.modified)
            + Self.format(song.description.format) + MPDSongTags.lines(song.description.metadata, wanted: tags)
            + Self.length(seconds)
    }

    /// The `Format` line of a song decoded to `format`.
    static func format(_ format: AudioFormat) -> String {
        "Format: \(audioFormat(format))\n"
    }

    /// `format` as MPD writes an audio format: rate, sample (`f`: the player's 32-bit floating point) and channels
    /// (always two: the player decodes every file to stereo).
    static func audioFormat(_ format: AudioFormat) -> String {
        "\(format.sampleRate):f:\(format.channelCount)"
    }

    /// A folder's `directory` line and, `withDate`, its time of change on disk.
    private func folderLines(_ path: String, withDate: Bool) -> String {
        Self.field("directory", path) + (withDate ? Self.modified("\(musicFolder.path)/\(path)") : "")
    }

    /// The `Time` and `duration` lines of a song `seconds` long.
    static func length(_ seconds: Double) -> String {
        "Time: \(Int(seconds.rounded()))\nduration: \(fixedDecimals(seconds, places: 3))\n"
    }
}

import FoundationEssentials
import QueuePlayerControl

/// The stored playlists' commands: `listplaylists`, `listplaylist`, `listplaylistinfo`, `load`, `save`, `rm`,
/// `rename`, `playlistadd`, `playlistdelete`, `playlistmove`, `playlistclear`, `searchaddpl`. A change is told to
/// idling clients as `stored_playlist`.
extension MPDCommandRunner {
    func listPlaylists() -> String {
        playlists.all().map { name in Self.field("playlist", name) + Self.modified(playlists.path(of: name)) }.joined()
    }

    /// MPD's `listplaylist NAME` and `listplaylistinfo NAME` (`withInfo`: each indexed song with its tags).
    func listPlaylist(_ name: String, withInfo: Bool) throws(MPDError) -> String {
        let indexed = withInfo ? index?.current.songs ?? [:] : [:]
        return try playlists.songs(name).map { song in
            guard withInfo else { return Self.field("file", song) }
            return indexed[song].map(indexedSong) ?? Self.songFile(song, at: musicFolder.location(of: song))
        }.joined()
    }

    /// MPD's `load NAME [START:END]`: the playlist's songs (those of its range) at the end of the queue; songs whose
    /// files are gone are left out.
    func load(_ name: String, range: String?) throws(MPDError) -> String {
        var songs = try playlists.songs(name)
        if let range { songs = Array(songs[try MPDArguments.range(range, count: songs.count)]) }
        let items = songs.map(musicFolder.location(of:)).filter {
            $0.contains("://") || FileManager.default.fileExists(atPath: $0)
        }
        guard !items.isEmpty else { return "" }
        let reply = controller.execute(.add(items), id: nil)
        guard reply.ok == true else { throw MPDError(.playlistLoad, reply.error ?? "cannot load \(name)") }
        return ""
    }

    /// MPD's `save NAME`: the queue as a new playlist.
    func save(_ name: String) throws(MPDError) -> String {
        let songs = controller.mpdState().queue.map { musicFolder.name(of: $0.location) }
        try playlists.write(name, songs: songs, creating: true)
        return storedPlaylistsChanged()
    }

    func remove(_ name: String) throws(MPDError) -> String {
        try playlists.remove(name)
        return storedPlaylistsChanged()
    }

    func rename(_ name: String, to newName: String) throws(MPDError) -> String {
        try playlists.rename(name, to: newName)
        return storedPlaylistsChanged()
    }

    /// MPD's `playlistadd NAME URI`: a song, or a folder's songs (see ``items(named:)``; a folder outside the index:
    /// its MP3 files by name), at the end of the playlist (made if new).
    func playlistAdd(_ name: String, _ uri: String) throws(MPDError) -> String {
        let files = try items(named: uri).flatMap { item in
            var isFolder = false
            let exists = FileManager.default.fileExists(atPath: item, isDirectory: &isFolder)
            return exists && isFolder ? ItemPaths.expand([item]).files.map(\.path) : [item]
        }
        let existing = (try? playlists.songs(name)) ?? []
        try playlists.write(name, songs: existing + files.map(musicFolder.name(of:)))
        return storedPlaylistsChanged()
    }

    func playlistDelete(_ name: String, position: String) throws(MPDError) -> String {
        var songs = try playlists.songs(name)
        songs.removeSubrange(try MPDArguments.range(position, count: songs.count))
        try playlists.write(name, songs: songs)
        return storedPlaylistsChanged()
    }

    /// MPD's `playlistmove NAME FROM TO`: the song at FROM to position TO; "Bad range" beyond the playlist.
    func playlistMove(_ name: String, from: String, to destination: String) throws(MPDError) -> String {
        let (from, destination) = (try MPDArguments.unsigned(from), try MPDArguments.unsigned(destination))
        guard from != destination else { return "" }
        var songs = try playlists.songs(name)
        guard from < songs.count, destination < songs.count else { throw MPDError(.argument, "Bad range") }
        songs.insert(songs.remove(at: from), at: destination)
        try playlists.write(name, songs: songs)
        return storedPlaylistsChanged()
    }

    /// MPD's `searchaddpl NAME FILTER… [position POS]`: the songs `search` finds, at the end of the playlist or at
    /// POS (made if new, and only if a song was found).
    func searchAddToPlaylist(_ arguments: [String]) throws(MPDError) -> String {
        var filter = Array(arguments.dropFirst())
        let position = try Self.takePosition(from: &filter).map { text throws(MPDError) in
            try MPDArguments.unsigned(text)
        }
        var songs = (try? playlists.songs(arguments[0])) ?? []
        if let position, position > songs.count { throw MPDError(.argument, "Bad position") }
        let found = try selection(filter, foldsCase: true).map(\.path)
        guard !found.isEmpty else { return "" }
        songs.insert(contentsOf: found, at: position ?? songs.count)
        try playlists.write(arguments[0], songs: songs)
        return storedPlaylistsChanged()
    }

    func playlistClear(_ name: String) throws(MPDError) -> String {
        _ = try playlists.songs(name)
        try playlists.write(name, songs: [])
        return storedPlaylistsChanged()
    }

    private func storedPlaylistsChanged() -> String {
        feed.tell([.storedPlaylist])
        return ""
    }
}

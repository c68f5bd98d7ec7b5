import FoundationEssentials

/// MPD's stored playlists: one `NAME.m3u` file each in a folder of their own, a song per line, named as clients name
/// songs (relative to the music folder, or a URL or absolute path). Files written by hand are read the same way;
/// `#` lines are comments.
///
/// Threading: any thread; each call reads or writes its file whole.
package struct MPDStoredPlaylists: Sendable {
    /// The folder the playlists are in, created when the first is saved.
    package let folder: String

    package init(folder: String) {
        self.folder = folder
    }

    /// The playlists' names, in order.
    package func all() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".m3u") }.sorted().map { String($0.dropLast(".m3u".count)) }
    }

    /// The file of the playlist named `name` (one of ``all()``).
    package func path(of name: String) -> String { "\(folder)/\(name).m3u" }

    /// The songs of playlist `name`; "No such playlist" when there is none.
    package func songs(_ name: String) throws(MPDError) -> [String] {
        guard let bytes = FileContents.bytes(atPath: try path(name, mustExist: true)),
            let text = String(validating: bytes, as: UTF8.self)
        else {
            throw MPDError(.noExist, "No such playlist")
        }
        return text.split(whereSeparator: \.isNewline).map(String.init).filter { !$0.hasPrefix("#") && !$0.isEmpty }
    }

    /// Writes `songs` as playlist `name`; "Playlist already exists" when `creating` and it does.
    package func write(_ name: String, songs: [String], creating: Bool = false) throws(MPDError) {
        let path = try path(name, mustExist: false)
        if creating, FileManager.default.fileExists(atPath: path) {
            throw MPDError(.exist, "Playlist already exists")
        }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try songs.map { $0 + "\n" }.joined().write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw MPDError(.system, "cannot write \(path): \(error)")
        }
    }

    /// Removes playlist `name`.
    package func remove(_ name: String) throws(MPDError) {
        do {
            try FileManager.default.removeItem(atPath: try path(name, mustExist: true))
        } catch let error as MPDError {
            throw error
        } catch {
            throw MPDError(.system, "cannot remove playlist \(name): \(error)")
        }
    }

    /// Renames playlist `name` to `newName`; "Playlist exists already" when that is taken.
    package func rename(_ name: String, to newName: String) throws(MPDError) {
        let from = try path(name, mustExist: true)
        let to = try path(newName, mustExist: false)
        guard !FileManager.default.fileExists(atPath: to) else { throw MPDError(.exist, "Playlist exists already") }
        do {
            try FileManager.default.moveItem(atPath: from, toPath: to)
        } catch {
            throw MPDError(.system, "cannot rename playlist \(name): \(error)")
        }
    }

    /// The file of playlist `name`: "Bad playlist name" for a name that could name another path, "No such playlist"
    /// when `mustExist` and it does not.
    private func path(_ name: String, mustExist: Bool) throws(MPDError) -> String {
        guard !name.isEmpty, !name.contains("/"), !name.contains("\n"), !name.contains("\r"), !name.hasPrefix(".")
        else { throw MPDError(.argument, "Bad playlist name") }
        let path = path(of: name)
        if mustExist, !FileManager.default.fileExists(atPath: path) { throw MPDError(.noExist, "No such playlist") }
        return path
    }
}

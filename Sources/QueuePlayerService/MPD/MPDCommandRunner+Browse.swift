import FoundationEssentials

/// Browsing the music folder as it is on disk: `lsinfo`.
extension MPDCommandRunner {
    /// MPD's `lsinfo [URI]`: a folder's subfolders (`directory`) and MP3 files (`file`), in name order, and at the
    /// top the stored playlists (`playlist`); a file's own entry. Read from the folder itself: tags come with the
    /// music folder's index (`update`), not yet.
    func listInfo(_ uri: String?) throws(MPDError) -> String {
        let location = try musicFolder.item(uri ?? "", isLocalClient: isLocalClient)
        var isFolder = false
        guard FileManager.default.fileExists(atPath: location, isDirectory: &isFolder), isFolder else {
            return Self.songFile(musicFolder.name(of: location), at: location)
        }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: location)) ?? []).filter {
            !$0.hasPrefix(".")
        }.sorted()
        var folders = ""
        var files = ""
        for name in names {
            let path = "\(location)/\(name)"
            var isSubfolder = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isSubfolder) else { continue }
            if isSubfolder {
                folders += Self.field("directory", musicFolder.name(of: path)) + Self.modified(path)
            } else if name.lowercased().hasSuffix(".mp3") {
                files += Self.songFile(musicFolder.name(of: path), at: path)
            }
        }
        let top = location == musicFolder.path ? listPlaylists() : ""
        return folders + files + top
    }
}

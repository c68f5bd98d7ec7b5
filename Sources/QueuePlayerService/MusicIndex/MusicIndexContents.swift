import FoundationEssentials

/// The music index at one moment: its songs, and its folders as a tree (the folders that hold songs, and those above
/// them), in the order MPD keeps its database: a folder's subfolders by name, its songs by album, disc number, track
/// number and then name (letter case aside in names).
///
/// A value type, safe to pass between threads.
package struct MusicIndexContents: Sendable {
    /// Every song, by its path.
    package let songs: [String: IndexedSong]
    /// When the last update ended; nil when the folder was never indexed.
    package let updated: Date?
    /// Each folder's songs and subfolders, by the folder's path (the top is `""`).
    private let folders: [String: Folder]

    private struct Folder: Sendable {
        var songs: [IndexedSong] = []
        var subfolders: [String] = []
        /// Listed among its parent's subfolders.
        var isLinked = false
    }

    /// Contents made of `songs`, last updated at `updated`.
    init(songs: [IndexedSong], updated: Date?) {
        self.songs = Dictionary(songs.map { ($0.path, $0) }, uniquingKeysWith: { _, last in last })
        self.updated = updated
        var folders: [String: Folder] = ["": Folder()]
        for song in self.songs.values {
            var folder = String(song.folder)
            folders[folder, default: Folder()].songs.append(song)
            // Up to the first folder already linked to its parent (the top always is).
            while !folder.isEmpty, folders[folder]?.isLinked != true {
                folders[folder, default: Folder()].isLinked = true
                let parent = folder.lastIndex(of: "/").map { String(folder[..<$0]) } ?? ""
                folders[parent, default: Folder()].subfolders.append(folder)
                folder = parent
            }
        }
        for key in folders.keys {
            folders[key]!.songs.sort(by: Self.precedes)
            folders[key]!.subfolders.sort(by: Self.precedes)
        }
        self.folders = folders
    }

    /// These contents with `changed` songs written over and those at `removed` paths taken out.
    func replacing(_ changed: [IndexedSong], removing removed: Set<String>, updated: Date) -> Self {
        var songs = self.songs
        for path in removed { songs[path] = nil }
        for song in changed { songs[song.path] = song }
        return Self(songs: Array(songs.values), updated: updated)
    }

    /// True when `path` names an indexed folder (`""` is the top).
    package func isFolder(_ path: String) -> Bool { folders[path] != nil }

    /// Visits the folder at `path` as MPD walks its database: its songs, then each subfolder (and, when `recursive`,
    /// what is in it, before the next subfolder).
    package func walk(
        _ path: String, recursive: Bool, folder visitFolder: (String) -> Void, song visitSong: (IndexedSong) -> Void
    ) {
        guard let folder = folders[path] else { return }
        folder.songs.forEach(visitSong)
        for subfolder in folder.subfolders {
            visitFolder(subfolder)
            if recursive { walk(subfolder, recursive: true, folder: visitFolder, song: visitSong) }
        }
    }

    /// Every song in walking order (see ``walk(_:recursive:folder:song:)``).
    package var orderedSongs: [IndexedSong] {
        var ordered: [IndexedSong] = []
        walk("", recursive: true, folder: { _ in }, song: { ordered.append($0) })
        return ordered
    }

    /// Name order, letter case aside (then with it, so the order is total).
    private static func precedes(_ first: String, _ second: String) -> Bool {
        let (a, b) = (first.lowercased(), second.lowercased())
        return a == b ? first < second : a < b
    }

    /// MPD's order of a folder's songs: by album (none first), then disc and track number (none, or not a positive
    /// number, first), then name.
    private static func precedes(_ first: IndexedSong, _ second: IndexedSong) -> Bool {
        let (a, b) = (first.description.metadata, second.description.metadata)
        if a.album != b.album {
            guard let firstAlbum = a.album else { return true }
            guard let secondAlbum = b.album else { return false }
            if firstAlbum.lowercased() != secondAlbum.lowercased() || firstAlbum != secondAlbum {
                return precedes(firstAlbum, secondAlbum)
            }
        }
        for (x, y) in [(number(a.disc), number(b.disc)), (number(a.track), number(b.track))] where x != y {
            return x < y
        }
        return precedes(first.path, second.path)
    }

    /// The positive number a disc or track tag starts with (`3/12` is 3); 0 for none.
    private static func number(_ text: String?) -> Int {
        max(0, Int(text?.prefix { $0.isASCII && $0.isNumber } ?? "") ?? 0)
    }
}

import FoundationEssentials
import Glibc
import Logging

/// Finds the MP3 files of a music folder and their times of change, following subfolders and symbolic links (each
/// folder once, so a link to a folder above cannot loop) and leaving out hidden names, as MPD's update does.
///
/// Threading: any thread; each call reads the disk as it is then.
struct MusicFolderWalk {
    /// The music folder.
    let root: String
    let logger: Logger

    /// Every MP3 file at or under `path` (relative to the root; empty for all of it), by its path relative to the
    /// root. A `path` that does not exist finds nothing.
    func files(under path: String) -> [String: Date] {
        var found = Found()
        var visited: Set<FileIdentity> = []
        visit(path, found: &found, visited: &visited)
        return found.files
    }

    /// Every folder at or under `path` (relative to the root; empty for all of it, which is listed as ""), by its
    /// path relative to the root.
    func folders(under path: String) -> [String] {
        var found = Found()
        var visited: Set<FileIdentity> = []
        visit(path, found: &found, visited: &visited)
        return found.folders
    }

    private struct Found {
        var files: [String: Date] = [:]
        var folders: [String] = []
    }

    private struct FileIdentity: Hashable {
        var device: UInt
        var inode: UInt
    }

    private func visit(_ path: String, found: inout Found, visited: inout Set<FileIdentity>) {
        let absolute = path.isEmpty ? root : "\(root)/\(path)"
        var info = stat()
        guard stat(absolute, &info) == 0 else {
            if path.isEmpty {
                logger.warning(
                    """
                    music index: cannot read the music folder \(root): \(String(cString: strerror(errno))); \
                    give --music-directory
                    """)
            }
            return
        }
        if info.st_mode & S_IFMT == S_IFREG {
            if path.lowercased().hasSuffix(".mp3") {
                found.files[path] = Date(
                    timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
            }
            return
        }
        guard info.st_mode & S_IFMT == S_IFDIR,
            visited.insert(FileIdentity(device: UInt(info.st_dev), inode: UInt(info.st_ino))).inserted
        else { return }
        found.folders.append(path)
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: absolute)
        } catch {
            logger.warning("music index: cannot read the folder \(absolute): \(error); its songs are left out")
            return
        }
        for name in names where !name.hasPrefix(".") {
            visit(path.isEmpty ? name : "\(path)/\(name)", found: &found, visited: &visited)
        }
    }
}

import FoundationEssentials

/// Where an MPD client's song names point: paths relative to the music folder, http(s) URLs, and for a client of the
/// same user on a Unix socket, absolute paths (as MPD allows). Never outside the folder through `..`.
package struct MPDMusicFolder: Sendable {
    /// The music folder, its path without a trailing slash.
    package let path: String

    /// The folder at `path`.
    package init(path: String) {
        self.path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    }

    /// The default music folder: `$XDG_MUSIC_DIR`, else the one `~/.config/user-dirs.dirs` names, else `~/Music`.
    package static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> Self {
        let home = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
        if let folder = environment["XDG_MUSIC_DIR"], !folder.isEmpty { return Self(path: folder) }
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "\(home)/.config"
        if let text = try? String(contentsOfFile: "\(config)/user-dirs.dirs", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("XDG_MUSIC_DIR=") })
        {
            let value = line.dropFirst("XDG_MUSIC_DIR=".count).filter { $0 != "\"" }
            return Self(path: value.replacing("$HOME", with: home))
        }
        return Self(path: "\(home)/Music")
    }

    /// The item a client's `uri` names (a path or an http(s) URL, as the queue takes them). `isLocalClient`: the
    /// client is on a Unix socket (the daemon's socket files are the user's alone), and may name absolute paths.
    package func item(_ uri: String, isLocalClient: Bool) throws(MPDError) -> String {
        let lowered = uri.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") { return uri }
        if lowered.hasPrefix("file://") || uri.hasPrefix("/") {
            let absolute = lowered.hasPrefix("file://") ? String(uri.dropFirst("file://".count)) : uri
            guard absolute.hasPrefix("/") else { throw MPDError(.argument, "Malformed file:// URI") }
            if absolute == path || absolute.hasPrefix(path + "/") || isLocalClient {
                guard FileManager.default.fileExists(atPath: absolute) else {
                    throw MPDError(.noExist, "No such file")
                }
                return absolute
            }
            throw MPDError(.permission, "Access denied")
        }
        if uri.contains("://") { throw MPDError(.argument, "Unsupported URI scheme") }
        let components = uri.split(separator: "/")
        guard !components.contains("..") && !components.contains(".") else {
            throw MPDError(.argument, "Malformed URI")
        }
        let absolute = components.isEmpty ? path : path + "/" + components.joined(separator: "/")
        guard FileManager.default.fileExists(atPath: absolute) else { throw MPDError(.noExist, "No such directory") }
        return absolute
    }

    /// Where a song a stored playlist names is: a URL or an absolute path as it is, else in the music folder.
    package func location(of song: String) -> String {
        song.contains("://") || song.hasPrefix("/") ? song : path + "/" + song
    }

    /// How a queued item is named to clients: relative to the music folder when inside it, else as queued.
    package func name(of location: String) -> String {
        location.hasPrefix(path + "/") ? String(location.dropFirst(path.count + 1)) : location
    }
}

import FoundationEssentials
import Logging
import QueuePlayer

/// Turns ITEM arguments (the command line's, or a client's `add`, `insert` and `open`) into the files to queue.
package enum ItemPaths {
    /// The files to queue, and what gave nothing to queue, each naming its folder, playlist or entry.
    package struct Expansion: Sendable, Equatable {
        package var files: [URL] = []
        package var problems: [String] = []
        /// What feeds say of the episodes among `files`.
        package var details: [URL: EpisodeDetails] = [:]
    }

    /// Files and `http`/`https` URLs stay as given (a missing or bad one is queued anyway, so that it fails alone,
    /// in its place, with a message naming it), but for a URL whose path ends neither in `.mp3` nor in a
    /// playlist's extension: its server's content type is looked at, and a playlist's is expanded, a podcast feed's
    /// (RSS or Atom) gives its MP3 episodes, newest first, and a stream QueuePlayer cannot play (AAC, Ogg, HLS, a web
    /// page) is a problem. A `file://` URI is its file; a URL of another scheme is
    /// a problem.
    /// Folders become their MP3 files, searched recursively, in name order with numbers compared by value ("2"
    /// before "10"); a folder with no MP3 is a problem. Playlists (`.m3u`, `.m3u8`, `.pls`), files or URLs, become
    /// their entries, in their order, expanded in turn (playlists nested at most ``maximumNesting`` deep); one that
    /// cannot be read or fetched, is HLS or lists nothing is a problem, and so is each entry of a scheme other than
    /// `http` and `https`, and each file a remote playlist names.
    ///
    /// Threading: any thread but an event loop's; it waits for remote playlists (``RemoteDocument``).
    package static func expand(_ arguments: [String]) -> Expansion {
        arguments.reduce(into: Expansion()) { expansion, argument in
            guard let url = expansion.location(argument) else { return }
            expansion.add(url, nesting: 0)
        }
    }

    /// How deep playlists may list playlists: a station's `.m3u` may name its `.pls`; a deeper chain is a loop.
    package static let maximumNesting = 3

    private static func mp3Files(in folder: URL) -> [URL] {
        let base = folder.standardizedFileURL.path
        let relativePaths = ((try? FileManager.default.subpathsOfDirectory(atPath: base)) ?? [])
            .filter { $0.lowercased().hasSuffix(".mp3") }
        return NaturalOrder.sorted(relativePaths).map { URL(fileURLWithPath: base).appendingPathComponent($0) }
    }
}

extension ItemPaths.Expansion {
    /// The file or remote item `argument` names: a path, a `file://` URI, or an `http` or `https` URL. Nil, with a
    /// problem noted, for a URL of another scheme.
    mutating func location(_ argument: String) -> URL? {
        guard argument.contains("://") else { return URL(fileURLWithPath: argument) }
        if let url = URL(string: argument), url.isFileURL || url.isRemoteItem {
            return url.isFileURL ? URL(fileURLWithPath: url.path) : url
        }
        problems.append("\(argument): only files and http or https URLs can be played")
        return nil
    }

    /// Adds what `url` names: a remote item or a file as it is, a folder's MP3 files, a playlist's entries.
    mutating func add(_ url: URL, nesting: Int) {
        let isPlaylist = Playlist.format(ofPath: url.path) != nil
        if url.isRemoteItem {
            if isPlaylist { add(remotePlaylist: url, nesting: nesting) } else { add(remote: url, nesting: nesting) }
            return
        }
        var isDirectory = false
        let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
        if exists, isDirectory {
            let found = ItemPaths.mp3Files(in: url)
            if found.isEmpty { problems.append("\(url.path): this folder holds no .mp3 files") }
            files += found
        } else if exists, isPlaylist {
            do {
                add(entries: try Playlist.entries(ofFileAt: url.path), of: url, nesting: nesting)
            } catch {
                problems.append("\(error)")
            }
        } else {
            files.append(url)
        }
    }

    /// Adds a remote URL whose path does not say what it is: an `.mp3` as it is; otherwise its server's content
    /// type decides (a station's tune-in link is often a playlist without a playlist's extension, and a stream in a
    /// format QueuePlayer does not play is refused now rather than when it comes to play). A server that does not
    /// answer yet leaves it an item, asked for when it plays.
    private mutating func add(remote url: URL, nesting: Int) {
        guard url.pathExtension.lowercased() != "mp3", let type = RemoteDocument.contentType(of: url) else {
            files.append(url)
            return
        }
        let kind = ContentType(type)
        if kind == .playlist || kind == .hls {
            add(remotePlaylist: url, nesting: nesting)
        } else if kind == .feed {
            add(feed: url, type: type)
        } else if let (reason, suggestion) = kind.refusal(of: type) {
            problems.append("\(url.absoluteString): \(reason). \(suggestion)")
        } else {
            files.append(url)
        }
    }

    /// Adds the MP3 episodes of the podcast feed at `url`, newest first; an XML document that is no feed is a
    /// problem, as any document that is not audio is.
    private mutating func add(feed url: URL, type: String) {
        do {
            let document = try RemoteDocument.fetch(url)
            guard FeedReader.isFeed(document.bytes) else {
                problems.append("\(url.absoluteString): not audio but \(type), and not a podcast feed (RSS or Atom)")
                return
            }
            let feed = try FeedReader.feed(in: document.bytes, location: url)
            files += feed.episodes.map(\.url)
            details.merge(feed.details) { first, _ in first }
        } catch {
            problems.append("\(error)")
        }
    }

    private mutating func add(remotePlaylist url: URL, nesting: Int) {
        do {
            let document = try RemoteDocument.fetch(url)
            add(entries: try Playlist.entries(ofRemote: url, document: document), of: url, nesting: nesting)
        } catch {
            problems.append("\(error)")
        }
    }

    /// Adds a playlist's entries, each expanded in turn; a problem for each entry that may not be played.
    private mutating func add(entries: [URL], of playlist: URL, nesting: Int) {
        let name = playlist.itemLocation
        guard nesting < ItemPaths.maximumNesting else {
            problems.append("\(name): playlists nested more than \(ItemPaths.maximumNesting) deep; is one in a loop?")
            return
        }
        for entry in entries {
            if entry.isFileURL, !playlist.isFileURL {
                problems.append("\(name): \(entry.path): a playlist from the network may list only http or https URLs")
            } else if entry.isFileURL || entry.isRemoteItem {
                add(entry, nesting: nesting + 1)
            } else {
                problems.append("\(name): \(entry.absoluteString): only files and http or https URLs can be played")
            }
        }
    }
}

/// Orders names as a person would: runs of digits compare by value ("2-b" before "10-a"), the rest by Unicode
/// scalar, case-insensitively first. Pure functions, for any thread.
package enum NaturalOrder {
    /// `names` in natural order. Each name is split once, not at every comparison: a folder of 10,000 files takes
    /// about 140,000 comparisons, and splitting at each was most of the time `add` took for it.
    package static func sorted(_ names: [String]) -> [String] {
        names.map(SortKey.init).sorted { $0.precedes($1) }.map(\.name)
    }

    /// A name with its lowercased runs of digits and non-digits, and each run's value when it is a number.
    private struct SortKey {
        let name: String
        let runs: [(text: String, value: Int?)]

        init(_ name: String) {
            self.name = name
            var runs: [(text: String, value: Int?)] = []
            var current = ""
            for character in name.lowercased() {
                if let last = current.last, last.isNumber != character.isNumber {
                    runs.append((current, Int(current)))
                    current = ""
                }
                current.append(character)
            }
            if !current.isEmpty { runs.append((current, Int(current))) }
            self.runs = runs
        }

        func precedes(_ other: SortKey) -> Bool {
            for (x, y) in zip(runs, other.runs) where x.text != y.text {
                if let m = x.value, let n = y.value { return m != n ? m < n : x.text.count < y.text.count }
                return x.text < y.text
            }
            return runs.count != other.runs.count ? runs.count < other.runs.count : name < other.name
        }
    }
}

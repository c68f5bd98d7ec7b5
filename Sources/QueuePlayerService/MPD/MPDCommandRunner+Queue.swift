import QueuePlayer
import QueuePlayerControl

/// The commands that add to the queue, take from it and give its songs priorities: `add`, `addid`, `delete`,
/// `deleteid`, `prio`, `prioid` (`clear` is the controller's own; those that reorder it are in
/// MPDCommandRunner+Order.swift).
extension MPDCommandRunner {
    /// MPD's `add URI [POS]` and `addid URI [POS]`: a file or folder of the music folder (a folder's MP3 files, in
    /// name order), an http(s) URL, or for a local client any file; at the end, or before the song at POS. `addid`
    /// answers the new song's `Id`.
    func add(_ uri: String, at position: String?, answeringID: Bool) throws(MPDError) -> String {
        let items = try items(named: uri)
        let queue = controller.mpdState().queue
        let index = try position.map { text throws(MPDError) in try Self.insertionIndex(text, in: queue) }
        guard !items.isEmpty else { return "" }
        let reply = controller.execute(Self.addition(of: items, at: index, in: queue), id: nil)
        guard reply.ok == true else { throw MPDError(.noExist, reply.error ?? "cannot add \(uri)") }
        guard answeringID else { return "" }
        return (reply.added ?? []).map { "Id: \($0)\n" }.joined()
    }

    /// What `add` and `playlistadd` take `uri` to name: for a folder of the music index, its songs as mpd walks its
    /// database (by album, disc and track, then each subfolder's); for anything else, the item itself.
    func items(named uri: String) throws(MPDError) -> [String] {
        let item = try musicFolder.item(uri == "/" ? "" : uri, isLocalClient: isLocalClient)
        let folder = item == musicFolder.path ? "" : musicFolder.name(of: item)
        guard let contents = index?.current, !folder.hasPrefix("/"), contents.isFolder(folder) else { return [item] }
        var songs: [String] = []
        contents.walk(
            folder, recursive: true, folder: { _ in }, song: { songs.append(musicFolder.location(of: $0.path)) })
        return songs
    }

    /// Where MPD's `POS` argument of `add`, `addid` and `findadd` inserts in `queue`: an absolute position, or
    /// `+N`/`-N` after or before the current song, which is the queue's first here. Before the current song is
    /// refused: played songs leave this queue, and the current one is always first.
    static func insertionIndex(_ text: String, in queue: [QueueEntry]) throws(MPDError) -> Int {
        if text.first == "+" || text.first == "-", queue.isEmpty { throw MPDError(.playerSync, "No current song") }
        let (index, number) = try relativePosition(text, limit: queue.count)
        if index > queue.count { throw MPDError(.argument, "Number too large: \(number)") }
        if index <= 0, !queue.isEmpty {
            throw MPDError(.argument, "a song cannot be added before the current one; add it at 1 and play it")
        }
        return index
    }

    /// A position that may count from the current song, the queue's first here: `N`, `+N` (N after it: N + 1) or `-N`
    /// (N before it: -N), with the number written. `+N` beyond `limit` is cut to `limit + 1`, so it cannot overflow.
    static func relativePosition(_ text: String, limit: Int) throws(MPDError) -> (index: Int, number: Int) {
        let relative = text.first == "+" || text.first == "-"
        let number = try MPDArguments.unsigned(relative ? String(text.dropFirst()) : text)
        return (text.first == "+" ? min(number, limit) + 1 : text.first == "-" ? -number : number, number)
    }

    /// The command that adds `items` at `index` of `queue` (from ``insertionIndex(_:in:)``), or at its end.
    static func addition(of items: [String], at index: Int?, in queue: [QueueEntry]) -> ControlCommand {
        if let index, index < queue.count { .insert(items, after: queue[index - 1].id) } else { .add(items) }
    }

    /// MPD's `delete POS|START:END`: the songs of the range, in one change.
    func delete(positions: String) throws(MPDError) -> String {
        let queue = controller.mpdState().queue
        let range = try MPDArguments.range(positions, count: queue.count)
        return range.isEmpty ? "" : try carryOut(.remove(queue[range].map(\.id)))
    }

    /// MPD's `deleteid ID`.
    func delete(id: String) throws(MPDError) -> String {
        let queue = controller.mpdState().queue
        return try carryOut(.remove([queue[try position(ofID: id, in: queue)].id]))
    }

    /// MPD's `prio PRIORITY POS|START:END...`: the songs at those positions get PRIORITY (0 to 255), in one change.
    func setPriority(_ priority: String, positions: ArraySlice<String>) throws(MPDError) -> String {
        let level = try MPDArguments.integer(priority, in: 0...255)
        let queue = controller.mpdState().queue
        var chosen: [Int] = []
        for text in positions {
            chosen += try MPDArguments.range(text, count: queue.count).map { queue[$0].id }
        }
        return try carryOut(.priority(level, ids: chosen))
    }

    /// MPD's `prioid PRIORITY ID...`.
    func setPriority(_ priority: String, ids: ArraySlice<String>) throws(MPDError) -> String {
        let level = try MPDArguments.integer(priority, in: 0...255)
        let queue = controller.mpdState().queue
        let chosen = try ids.map { text throws(MPDError) in queue[try position(ofID: text, in: queue)].id }
        return try carryOut(.priority(level, ids: chosen))
    }
}

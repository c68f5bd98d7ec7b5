import QueuePlayerControl

/// MPD's `sticker` command: a client's names and values for songs of the music index, kept in the state store.
extension MPDCommandRunner {
    /// `sticker get|set|delete|list|find song URI [NAME [VALUE | OPERATOR VALUE]]`, with mpd's words for what is
    /// wrong. A change is told to idling clients as `sticker`.
    func sticker(_ arguments: [String]) throws(MPDError) -> String {
        guard arguments[1] == "song" else { throw MPDError(.argument, "unknown sticker domain") }
        let (action, path) = (arguments[0], arguments[2])
        switch (action, arguments.count) {
        case ("get", 4):
            let value = try stickerStore { try $0.sticker(arguments[3], ofSong: try indexedSong(path)) }
            guard let value, !value.isEmpty else { throw MPDError(.noExist, "no such sticker") }
            return "sticker: \(arguments[3])=\(value)\n"
        case ("list", 3):
            let stickers = try stickerStore { try $0.stickers(ofSong: try indexedSong(path)) }
            return stickers.map { "sticker: \($0.name)=\($0.value)\n" }.joined()
        case ("set", 5):
            try stickerStore { try $0.setSticker(arguments[3], ofSong: try indexedSong(path), to: arguments[4]) }
        case ("delete", 3), ("delete", 4):
            let name = arguments.count == 4 ? arguments[3] : nil
            guard try stickerStore({ try $0.deleteSticker(name, ofSong: try indexedSong(path)) }) else {
                throw MPDError(.noExist, "no such sticker")
            }
        case ("find", 4), ("find", 6):
            return try findStickers(arguments[3], under: path, matching: Array(arguments.dropFirst(4)))
        default:
            throw MPDError(.argument, "bad request")
        }
        feed.tell([.sticker])
        return ""
    }

    /// `sticker find song FOLDER NAME [= | < | > VALUE]`: each song of the index under FOLDER with the sticker.
    private func findStickers(_ name: String, under folder: String, matching: [String]) throws(MPDError) -> String {
        var comparison: (StateStore.StickerComparison, String)?
        if matching.count == 2 {
            guard let kind = StateStore.StickerComparison(rawValue: matching[0]) else {
                throw MPDError(.argument, "bad operator")
            }
            comparison = (kind, matching[1])
        }
        let songs = try database().current.songs
        let found = try stickerStore { try $0.stickers(named: name, under: folder, matching: comparison) }
        return found.filter { songs[$0.path] != nil }.map { "file: \($0.path)\nsticker: \(name)=\($0.value)\n" }
            .joined()
    }

    /// The path of the song of the index that `uri` names; "No such song" when the index has none.
    private func indexedSong(_ uri: String) throws(MPDError) -> String {
        guard try database().current.songs[uri] != nil else { throw MPDError(.noExist, "No such song") }
        return uri
    }

    /// Runs `work` on the state store; its failure answered as mpd answers a failing sticker database.
    private func stickerStore<Result>(_ work: (StateStore) throws -> Result) throws(MPDError) -> Result {
        do {
            return try work(controller.store)
        } catch let error as MPDError {
            throw error
        } catch {
            throw MPDError(.unknown, "the sticker database failed: \(error)")
        }
    }
}

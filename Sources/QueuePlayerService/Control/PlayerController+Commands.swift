import Dispatch
import FoundationEssentials
import Logging
import QueuePlayer
import QueuePlayerControl
import Synchronization

/// The commands the front ends send, carried out one at a time on one path.
extension PlayerController {
    /// Carries out `command` and returns the reply to send. A read replies and does nothing else; any other
    /// command is told to subscribers if it changed anything, then saved, both before the reply (an acknowledged
    /// edit survives a SIGKILL; an idling MPD client hears of it without waiting for the disk). A command that fails
    /// changes nothing. With `ifCurrentEntry`, a command is ignored (and replied to as done) unless that entry is
    /// current when its turn comes: MPRIS's `SetPosition` for a stale track.
    ///
    /// Every front end's commands take turns on one path: each is carried out, told and saved before the next
    /// begins, so that a command that reads the player to act on it sees what the one before it did. The files an
    /// `open`, `add` or `insert` names are checked before its turn (a folder of 10,000 files takes a while), so that
    /// a `pause` sent meanwhile does not wait for them.
    package func execute(_ command: ControlCommand, id: RequestID?, ifCurrentEntry: Int? = nil) -> ControlReply {
        do {
            let items = try checkedItems(for: command)
            var reply = try commandPath.take { () throws(ControlError) -> ControlReply in
                if let ifCurrentEntry, snapshot().current?.id != ifCurrentEntry { return ControlReply() }
                let queuedBefore = player.entryCount
                let reply = try perform(command, items: items)
                commandPath.reached(.carriedOut)
                if !command.isRead {
                    tellThenSave(saves: true)
                    forgetTagsOfUnqueuedEntries()
                    FreedMemory.release(afterQueueChangedFrom: queuedBefore, to: player.entryCount)
                }
                return reply ?? ControlReply(state: snapshot())
            }
            reply.id = id
            reply.ok = true
            return reply
        } catch {
            return .failure(id, error.description)
        }
    }

    /// The checked items of an `open`, `add` or `insert` (see ``checkedFiles(_:command:)``); none for the others.
    private func checkedItems(for command: ControlCommand) throws(ControlError) -> ItemPaths.Expansion {
        switch command {
        case .open(let uri):
            let path = uri.hasPrefix("file://") ? URL(string: uri)?.path ?? "" : uri
            return try checkedFiles([path], command: "open")
        case .add(let items, let unplayed): return try checkedFiles(items, command: "add", unplayedOnly: unplayed)
        case .insert(let items, _): return try checkedFiles(items, command: "insert")
        default: return ItemPaths.Expansion()
        }
    }

    /// Carries out `command` (with the files it names, checked) on the player, and returns its own reply, or nil
    /// when the reply is the player's state (taken once subscribers have been told). On the command path only.
    private func perform(_ command: ControlCommand, items: ItemPaths.Expansion) throws(ControlError) -> ControlReply? {
        switch command {
        case .play: player.play()
        case .pause: player.pause()
        case .playPause: player.togglePlayPause()
        case .stop: player.stop()
        case .next: player.advanceToNextItem()
        case .previous: player.returnToPreviousItem()
        case .status, .metadata, .subscribe: break
        case .position(let seconds, let relative): if let seconds { try seek(seconds, relative: relative) }
        case .volume(let level, let relative):
            if let level {
                if relative {
                    player.changeVolume(by: Float(level))
                } else {
                    player.volume = Float(min(1, max(0, level)))
                }
            }
        case .open: player.playNow(self.items(for: items))
        case .add: return ControlReply(added: player.insert(self.items(for: items), after: nil).map(\.id))
        case .insert(_, let after):
            let entry = try entry(after, command: "insert")
            return ControlReply(added: player.insert(self.items(for: items), after: entry).map(\.id))
        case .remove(let ids): player.remove(try entries(ids, command: "remove"))
        case .move(let id, let position): player.move(try entry(id, command: "move"), to: position - 1)
        case .priority(let priority, let ids):
            player.setPriority(try ControlCommand.priorityLevel(priority), of: try entries(ids, command: "priority"))
        case .rearrange(let ids):
            guard player.rearrange(try entries(ids, command: "rearrange")) else {
                throw ControlError(
                    "rearrange: 'ids' must name every queued item once (\(player.entryCount) are queued, \(ids.count) "
                        + "named); `playerctl queue` lists them")
            }
        case .tag(let id, let name, let value): try tag(entry(id, command: "tag"), name: name, value: value)
        case .untag(let id, let name): try untag(entry(id, command: "untag"), name: name)
        case .range(let id, let start, let end): try setRange(of: entry(id, command: "range"), start: start, end: end)
        case .clear: player.removeAllItems()
        case .loop(let status): if let status { setLoop(status) }
        case .modes(let repeats, let single): setModes(repeats: repeats, single: single)
        case .shuffle(let status):
            switch status {
            case nil: break
            case .on: player.shuffleMode = .items
            case .off: player.shuffleMode = .off
            case .toggle: player.shuffleMode = player.shuffleMode == .off ? .items : .off
            }
        case .replayGain(let mode): if let mode { player.replayGainMode = QueuePlayer.ReplayGainMode(mode) }
        case .queue:
            let listing = queueListing()
            return ControlReply(
                queue: listing.entries.enumerated().map { index, entry in
                    let start = player.item(for: entry)?.startTime.seconds ?? 0
                    let range = listing.ranges[entry.id]
                    return EntryLine(
                        id: entry.id, url: entry.location, current: index == 0, startsAt: start > 0 ? start : nil,
                        priority: listing.priorities[entry.id].map(Int.init), rangeStart: range?.start.seconds,
                        rangeEnd: range.flatMap { $0.end.isNumeric ? $0.end.seconds : nil })
                })
        case .background: application.enterBackground()
        case .foreground: application.enterForeground()
        case .quit: quit()
        }
        return nil
    }

    private func seek(_ seconds: Double, relative: Bool) throws(ControlError) {
        guard seconds.isFinite else { throw ControlError("position: '\(seconds)' is not a number of seconds") }
        guard let shown = currentEntry() else { throw ControlError("position: nothing is queued") }
        guard !shown.item.isLive else {
            throw ControlError("position: \(shown.entry.location) is a live stream, which cannot be sought in")
        }
        guard shown.isSeekable else {
            throw ControlError(
                "position: \(shown.entry.location) cannot be sought in: its server does not serve byte ranges; "
                    + "download it and queue the file to seek in it")
        }
        guard case let length = shown.item.duration, length.isNumeric else {
            throw ControlError("position: \(shown.entry.location) cannot be read, so it cannot be sought in")
        }
        let target = min(max(0, relative ? shown.seconds + seconds : seconds), length.seconds)
        player.seek(to: MediaTime(seconds: target, preferredTimescale: length.timescale))
        state.withLock { $0.jumps += 1 }
    }

    /// The files and remote items `items` name (folders, playlists and feeds expanded; with `unplayedOnly`, less the
    /// episodes already played), each file checked to be a readable MP3; or an error naming the first that is
    /// missing, unreadable or not MP3, or a folder, playlist or feed that gave nothing, with nothing queued. A remote
    /// item is not fetched here: it fails alone, in its place, when played.
    private func checkedFiles(
        _ items: [String], command: String, unplayedOnly: Bool = false
    ) throws(ControlError) -> ItemPaths.Expansion {
        guard !items.isEmpty else { throw ControlError("\(command): give at least one file or folder") }
        // A URL is queued as it is, or refused by its scheme: ItemPaths tells which.
        if let missing = items.first(where: { !$0.contains("://") && !FileManager.default.fileExists(atPath: $0) }) {
            throw ControlError("\(command): no such file or folder: \(missing) (nothing was queued)")
        }
        var expansion = ItemPaths.expand(items)
        if let problem = expansion.problems.first {
            throw ControlError("\(command): \(problem) (nothing was queued)")
        }
        if unplayedOnly, !expansion.files.isEmpty {
            let played: Set<String>
            do {
                played = try store.playedEpisodes()
            } catch {
                throw ControlError(
                    "\(command) --unplayed: cannot read which episodes were played from \(store.location): \(error) "
                        + "(nothing was queued); leave out --unplayed to queue them all")
            }
            expansion.files.removeAll { played.contains($0.itemLocation) }
            guard !expansion.files.isEmpty else {
                throw ControlError(
                    "\(command): every episode \(items.joined(separator: ", ")) lists has been played "
                        + "(nothing was queued); leave out --unplayed to queue them again")
            }
        }
        let files = expansion.files
        guard !files.isEmpty else {
            throw ControlError("\(command): \(items.joined(separator: ", ")) holds no .mp3 files (nothing was queued)")
        }
        if let failure = Self.firstUnplayable(files.filter(\.isFileURL)) {
            throw ControlError("\(command): \(failure) (nothing was queued)")
        }
        return expansion
    }

    /// The error of the first of `files` (in their order) that is not a readable MP3, checked on every core: a
    /// folder of 10,000 files is checked in a fraction of a second.
    private static func firstUnplayable(_ files: [URL]) -> DecoderError? {
        let failures = Mutex([Int: DecoderError]())
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            do throws(DecoderError) {
                try PlayerItem.checkPlayable(files[index])
            } catch {
                failures.withLock { $0[index] = error }
            }
        }
        return failures.withLock { failures in failures.min { $0.key < $1.key }?.value }
    }

    func entry(_ id: Int, command: String) throws(ControlError) -> QueueEntry {
        try entries([id], command: command)[0]
    }

    /// The queued entries with `ids`, in that order; an error naming the first id not queued.
    private func entries(_ ids: [Int], command: String) throws(ControlError) -> [QueueEntry] {
        let queued = Dictionary(player.entries().map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return try ids.map { id throws(ControlError) in
            guard let entry = queued[id] else {
                throw ControlError("\(command): no queued item has id \(id); `playerctl queue` lists them")
            }
            return entry
        }
    }
}

import FoundationEssentials

extension PlaybackEngine.State {
    /// Inserts entries for `locations` after `entry` (nil, or an entry no longer queued: at the end), given the ring
    /// frame being heard; returns them.
    mutating func insert(
        _ locations: [String], after entry: QueueEntry?, audibleFrame audible: Int
    ) -> ([QueueEntry], [Action]) {
        let entries = newEntries(for: locations)
        guard !phase.isFinal else { return (entries, []) }
        var order = order
        let position = entry.flatMap { order.firstIndex(of: $0) }.map { $0 + 1 } ?? order.count
        order.insert(contentsOf: entries, at: position)
        return (entries, [.failSeeks(reorder(to: order, audibleFrame: audible)), .wakeDecoder])
    }

    /// Removes `entry`: the one being heard is left for the next (as ``advanceToNextItem()``); another is dropped
    /// from the order. An entry not queued changes nothing.
    mutating func remove(_ entry: QueueEntry, audibleFrame audible: Int) -> [Action] {
        guard !phase.isFinal else { return [] }
        if timeline.playing?.entry == entry { return advanceToNextItem() }
        guard order.contains(entry) else { return [] }
        return [.failSeeks(reorder(to: order.filter { $0 != entry }, audibleFrame: audible)), .wakeDecoder]
    }

    /// Moves `entry` to `index` of the order (clamped); false for an entry not queued. A new first entry starts
    /// from its beginning, as after a skip.
    mutating func move(_ entry: QueueEntry, to index: Int, audibleFrame audible: Int) -> (Bool, [Action]) {
        var order = order
        guard !phase.isFinal, let from = order.firstIndex(of: entry) else { return (false, []) }
        order.remove(at: from)
        order.insert(entry, at: min(max(0, index), order.count))
        if from == 0 || index <= 0, order.first != timeline.playing?.entry {
            return (true, startAfresh(with: order))
        }
        return (true, [.failSeeks(reorder(to: order, audibleFrame: audible)), .wakeDecoder])
    }

    /// Makes `entries`, the entries queued each once in another order, the order; false (and nothing changes) for
    /// anything else. A new first entry starts from its beginning, as after a skip; with the same first entry, what
    /// was decoded ahead is kept where it still applies.
    mutating func rearrange(to entries: [QueueEntry], audibleFrame audible: Int) -> (Bool, [Action]) {
        let order = order
        guard !phase.isFinal, entries.count == order.count, Set(entries) == Set(order) else { return (false, []) }
        if entries.first != order.first { return (true, startAfresh(with: entries)) }
        var actions: [Action] = []
        reorderIfChanged(to: entries, from: order, audibleFrame: audible, into: &actions)
        return (true, actions)
    }

    /// Makes `order` the order, its first entry starting from its beginning: what was decoded ahead is dropped.
    mutating func startAfresh(with order: [QueueEntry]) -> [Action] {
        pending = order
        forgetQueueEndReport()
        return restart(with: PlaybackEngine.Restart(startFrame: 0, resumes: nil))
    }

    /// Makes `order` (which keeps the playing entry first, if any) the play order. If the entries already decoded
    /// are still its prefix, only the pending part changes; otherwise, or when `redecoding` (an entry decoded ahead
    /// plays differently now), the playing entry restarts at the frame being heard, and everything after it is
    /// decoded again. Returns the seek completions of a restart it replaced.
    mutating func reorder(
        to order: [QueueEntry], audibleFrame audible: Int, redecoding: Bool = false
    ) -> [@Sendable (Bool) -> Void] {
        var replaced: [@Sendable (Bool) -> Void] = []
        defer { forgetQueueEndReport() }
        let decoded = timeline.entries + (opening.map { [$0] } ?? [])
        if let waiting = waitingRestart {
            // A restart already waits: `pending` is the whole order; keep its start if it still applies.
            pending = order
            if waiting.resumes != nil, waiting.resumes != order.first {
                replaced = replaceRestart(with: PlaybackEngine.Restart(startFrame: 0, resumes: nil))
            }
        } else if !redecoding, order.starts(with: decoded) {
            if decoded.isEmpty, case .restarting(let taken) = activity, order.first != pending.first {
                // The restart under way starts the first pending entry at its frame, and that entry is no longer
                // first (the soak found the next item starting at the frame of the one removed): the new first
                // starts at its beginning, and the restart's seeks did not finish.
                replaced = taken.completions
                activity = .restarting(PlaybackEngine.Restart(number: taken.number, startFrame: 0, resumes: nil))
            }
            pending = Array(order.dropFirst(decoded.count))
        } else if let playing = timeline.playing, playing.info != nil, order.first == playing.entry {
            pending = order
            let startFrame = max(playing.resumeFrame, audible - playing.startFrame)
            replaced = replaceRestart(
                with: PlaybackEngine.Restart(
                    startFrame: startFrame, resumes: playing.entry, keepsObservers: true,
                    continuesRingFrame: playing.startFrame + startFrame, cutsAtRingFrame: playing.endFrame))
        } else {
            pending = order
            replaced = replaceRestart(with: PlaybackEngine.Restart(startFrame: 0, resumes: nil))
        }
        return replaced
    }
}

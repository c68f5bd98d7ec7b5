import FoundationEssentials

/// The player's commands and its part of each event, as transitions of the engine's one state: each reads and
/// changes the queue, the phase and the ``PlayerModel`` in one step under the engine's lock, and appends what is left
/// to do once the lock is released to `actions`, in order. A change of the current item is found by comparing the
/// model before and after, so no transition reports it.
extension PlaybackEngine.State {
    /// The queued items, the current one first (also when it is held at its end).
    var playerItems: [PlayerItem] {
        let queued = order.compactMap { player.items[$0.id] }
        guard let waiting = itemWaitingAtItsEnd, !queued.contains(waiting) else { return queued }
        return [waiting] + queued
    }

    /// The current item once it has been heard to its end and waits there (``QueuePlayer/actionAtItemEnd`` `.pause`
    /// or `.none`): it has left the order, and its end is told or being told. Nil otherwise.
    var itemWaitingAtItsEnd: PlayerItem? {
        guard player.actionAtItemEnd != .advance, let current = player.currentItem,
            let entry = player.entry(for: current), !order.contains(entry)
        else { return nil }
        return current
    }

    /// The item the player shows as current: the held one, the one made current, or the first queued one's.
    var shownCurrentItem: PlayerItem? {
        player.heldItem ?? player.currentItem ?? firstInOrder.flatMap { player.items[$0.id] }
    }

    /// The current item's audible time, or where it is cued when its rate must be read from its file first.
    enum PlayerTime: Sendable {
        case known(MediaTime)
        /// Cued at `frame` of `item`, which has not been opened: its rate is not known yet.
        case cued(PlayerItem?, frame: Int)
    }

    /// The current item's time (see `QueuePlayer/currentTime()`), given the ring frame heard now.
    func playerTime(audibleFrame audible: Int) -> PlayerTime {
        func length(_ item: PlayerItem) -> MediaTime { item.duration.isNumeric ? item.duration : .zero }
        if let held = player.heldItem { return .known(length(held)) }
        if let cue = cuedStart, let current = shownCurrentItem, player.entry(for: current) == cue.entry {
            // The current item is not being heard (paused before it started, cued, or a seek is under way); from
            // its start, it starts at its start time.
            guard cue.startFrame > 0 else { return .known(current.startTime) }
            guard let rate = cue.startRate ?? cue.info?.format.sampleRate else {
                return .cued(player.items[cue.entry.id], frame: cue.startFrame)
            }
            return .known(MediaTime(value: Int64(cue.startFrame), timescale: Int32(rate)))
        }
        let status = status(audibleFrame: audible)
        guard let heard = status.current else { return .known(player.currentItem.map(length) ?? .zero) }
        // The last frames of an item removed or skipped sound until the output is flushed: they are no one's time.
        guard player.items[heard.entry.id] != nil else { return .known(.zero) }
        return .known(MediaTime(value: Int64(status.elapsedFrames), timescale: Int32(heard.format.sampleRate)))
    }

    /// Makes the item of the first queued entry current (nil with an empty queue), after a command left the
    /// current one.
    mutating func makeFirstQueuedItemCurrent() {
        player.makeCurrent(firstInOrder.flatMap { player.items[$0.id] })
    }

    // MARK: Commands

    /// Queues `items` after `entry` (nil, or an entry no longer queued: at the end; while shuffled, at random places
    /// after the current entry) and returns their entries.
    mutating func insertItems(
        _ items: [PlayerItem], after entry: QueueEntry?, audibleFrame audible: Int, into actions: inout [Action]
    ) -> [QueueEntry] {
        let entries: [QueueEntry]
        if player.shuffleMode == .items, entry.map({ !order.contains($0) }) ?? true {
            entries = newEntries(for: items.map(\.location))
            insertShuffled(entries, audibleFrame: audible, into: &actions)
        } else {
            let inserted: [Action]
            (entries, inserted) = insert(items.map(\.location), after: entry, audibleFrame: audible)
            actions += inserted
        }
        player.register(items, as: entries)
        return entries
    }

    /// True when `item` is not queued already and `after` (nil: the end) is queued.
    func canInsert(_ item: PlayerItem, after: PlayerItem?) -> Bool {
        let queued = Set(playerItems)
        return !queued.contains(item) && (after.map(queued.contains) ?? true)
    }

    /// Queues `item` after `after` (nil: at the end) unless ``canInsert(_:after:)`` says no.
    mutating func insertItem(
        _ item: PlayerItem, after: PlayerItem?, audibleFrame audible: Int, into actions: inout [Action]
    ) {
        guard canInsert(item, after: after) else { return }
        _ = insertItems([item], after: after.flatMap(player.entry(for:)), audibleFrame: audible, into: &actions)
    }

    /// Removes `item`; removing the current item plays the next one.
    mutating func removeItem(_ item: PlayerItem, audibleFrame audible: Int, into actions: inout [Action]) {
        guard let entry = player.entry(for: item) else { return }
        dropRepetition(of: entry, audibleFrame: audible, into: &actions)
        if player.currentItem === item, !order.contains(entry) {
            // The current item ended and is held at its end (actionAtItemEnd .pause or .none): move on.
            actions += advanceToNextItem()
            if firstInOrder == nil { player.makeCurrent(nil) }
        } else {
            let wasCurrent = firstInOrder == entry
            actions += remove(entry, audibleFrame: audible)
            if wasCurrent {
                player.release(entry)
                makeFirstQueuedItemCurrent()
                return
            }
        }
        player.release(entry)
    }

    /// Removes the items of `entries` still queued, in one change: the current one (and one held at its end) as
    /// ``removeItem(_:audibleFrame:into:)`` removes it, the others out of the order at once.
    mutating func removeEntries(_ entries: [QueueEntry], audibleFrame audible: Int, into actions: inout [Action]) {
        let current = [firstInOrder, timeline.playing?.entry, player.currentItem.flatMap(player.entry(for:))]
        let queued = Set(order).subtracting(current.compactMap { $0 })
        let others = phase.isFinal ? [] : Set(entries).intersection(queued)
        if !others.isEmpty {
            for entry in others { dropRepetition(of: entry, audibleFrame: audible, into: &actions) }
            let staying = order.filter { !others.contains($0) }
            actions += [.failSeeks(reorder(to: staying, audibleFrame: audible)), .wakeDecoder]
            for entry in others { player.release(entry) }
        }
        for entry in entries where !others.contains(entry) {
            guard let item = player.items[entry.id] else { continue }
            removeItem(item, audibleFrame: audible, into: &actions)
        }
    }

    /// Empties the queue; the current item becomes nil.
    mutating func removeAllItems(into actions: inout [Action]) {
        actions += removeAll()
        player.forgetQueue()
        player.makeCurrent(nil)
    }

    /// Leaves the first entry for the next, remembering its file; under a repeat mode, settles its repetition.
    mutating func advancePlayer(audibleFrame audible: Int, into actions: inout [Action]) {
        if itemWaitingAtItsEnd != nil || player.heldItem != nil {
            // The current item was heard to its end and has left the queue (and joined the history) already: going
            // on releases the decoding thread's hold, if it holds, and makes the first queued entry current at its
            // start, or nothing, past the last.
            if isHoldingAtItemEnd { actions += advanceToNextItem() }
            makeFirstQueuedItemCurrent()
            return
        }
        guard let left = firstInOrder else { return }
        player.remember(left.url)
        settleRepetition(ofSkipped: left, audibleFrame: audible, into: &actions)
        skip(left, into: &actions)
    }

    /// Moves past `left`, the first entry, without remembering it. The item left posts no end: it is let go here,
    /// and the next one is current at once, as in AVFoundation.
    mutating func skip(_ left: QueueEntry, into actions: inout [Action]) {
        actions += advanceToNextItem()
        if !order.contains(left) { player.release(left) }
        makeFirstQueuedItemCurrent()
    }

    /// Moves `entry` to `index`; a new first entry is current at once, as after a skip.
    mutating func moveEntry(
        _ entry: QueueEntry, to index: Int, audibleFrame audible: Int, into actions: inout [Action]
    ) -> Bool {
        let first = firstInOrder
        let (moved, moving) = move(entry, to: index, audibleFrame: audible)
        actions += moving
        if moved, firstInOrder != first { makeFirstQueuedItemCurrent() }
        return moved
    }

    /// Puts the queue in the order of `entries` (see ``rearrange(to:audibleFrame:)``); a new first entry is current
    /// at once, as after a skip.
    mutating func rearrangeEntries(
        _ entries: [QueueEntry], audibleFrame audible: Int, into actions: inout [Action]
    ) -> Bool {
        let first = firstInOrder
        let (rearranged, rearranging) = rearrange(to: entries, audibleFrame: audible)
        actions += rearranging
        if rearranged, firstInOrder != first { makeFirstQueuedItemCurrent() }
        return rearranged
    }

    /// Queues the entries of a saved queue with their ids, `priorities` (by id; the first entry of the order has
    /// none) and `playbackRanges` (by id), the first cued at `start`.
    mutating func restore(
        _ entries: [QueueEntry], startingAt start: MediaTime, priorities: [Int: UInt8],
        playbackRanges: [Int: MediaTimeRange], into actions: inout [Action]
    ) {
        actions += enqueue(restoring: entries)
        player.register(entries.map { PlayerItem(location: $0.location) }, as: entries)
        for entry in entries {
            player.playbackRanges[entry.id] = playbackRanges[entry.id]
            guard entry != firstInOrder else { continue }
            if let priority = priorities[entry.id], priority > 0 { player.priorities[entry.id] = priority }
        }
        if start.isNumeric, start.value > 0 {
            actions += cue(startFrame: Int(start.value), countedAt: Int(start.timescale))
        }
    }

    /// Rate 1; a stop is over.
    mutating func playPlayer(into actions: inout [Action]) {
        player.isStopped = false
        actions += play()
    }

    /// Rate 0. Paused already, nothing happens: no time is reported, as none changed.
    mutating func pausePlayer(into actions: inout [Action]) {
        let wasRequested = isPlaybackRequested
        actions += pause()
        if wasRequested { actions.append(.reportTime) }
    }

    /// Rate 0, the current item back at its start, and stopped until the next play.
    mutating func stopPlayer(into actions: inout [Action]) {
        actions += pause()
        player.isStopped = true
        _ = restartCurrentItem(atFrame: 0, completion: nil, into: &actions)
        actions.append(.reportTime)
    }

    /// Goes back one file of the history (see `QueuePlayer/returnToPreviousItem()`).
    mutating func returnToPreviousItem(audibleFrame audible: Int, into actions: inout [Action]) {
        guard let last = player.history.popLast() else {
            _ = restartCurrentItem(atFrame: 0, completion: nil, into: &actions)
            return
        }
        guard let current = firstInOrder else {
            _ = insertItems([PlayerItem(url: last)], after: nil, audibleFrame: audible, into: &actions)
            playPlayer(into: &actions)
            return
        }
        dropRepetition(of: current, audibleFrame: audible, into: &actions)
        // Both queued before the skip, in one edit: the current item must not follow an entry that is already gone.
        let currentItem = player.items[current.id] ?? PlayerItem(location: current.location)
        _ = insertItems([PlayerItem(url: last), currentItem], after: current, audibleFrame: audible, into: &actions)
        skip(current, into: &actions)
    }

    /// Sets what happens at an item's end: the decoding thread holds there unless it is `.advance`.
    mutating func setActionAtItemEnd(_ action: QueuePlayer.ActionAtItemEnd, into actions: inout [Action]) {
        player.actionAtItemEnd = action
        actions += setHoldsAtItemEnd(action != .advance)
    }

    /// Starts the current item again at `frame`: a seek when it is being heard, a cue when it is not yet (so that
    /// its start is still announced when playback reaches it; `completion` is then told `true` at once). False,
    /// with `completion` told so, when nothing is queued.
    mutating func restartCurrentItem(
        atFrame frame: Int, completion: (@Sendable (Bool) -> Void)?, into actions: inout [Action]
    ) -> Bool {
        if cuedStart == nil, timeline.current != nil {
            let (accepted, seeking) = seek(toFrame: frame, completion: completion)
            actions += seeking
            return accepted
        }
        guard firstInOrder != nil else {
            actions.append(.failSeeks(completion.map { [$0] } ?? []))
            return false
        }
        actions += cue(startFrame: frame)
        actions.append(.finishSeeks(completion.map { [$0] } ?? []))
        return true
    }

    // MARK: Events

    /// An item was first heard; its start time is used up. A command may have moved on since (a skip, a move, a
    /// removal): the item it made current stays so. An item that is no longer queued but still known ended on its
    /// own, heard through to its end before this start was handled (a short item, or an unpaced sink): its end
    /// follows, and it is current until then.
    mutating func playerHeardStart(of entry: QueueEntry) {
        let item = player.items[entry.id]
        item?.startTime = .zero
        if firstInOrder == entry || (item != nil && !order.contains(entry)) { player.makeCurrent(item) }
    }

    /// An item was heard to its end, or failed: its file joins the history; returns its item, if still known.
    /// Under `.pause`, a finished item pauses the player.
    mutating func playerHeardEnd(
        of entry: QueueEntry, finished: Bool, into actions: inout [Action]
    ) -> PlayerItem? {
        player.remember(entry.url)
        guard let item = player.items[entry.id] else { return nil }
        if finished, player.actionAtItemEnd == .pause { pausePlayer(into: &actions) }
        return item
    }

    /// After an item's end was told: the item is let go. A current item that failed (reached by a skip or an edit)
    /// is never heard: the next one is current at once, as after a skip, so that the current item is always the
    /// first of the queue.
    mutating func playerReleased(_ entry: QueueEntry, failed: Bool) {
        let item = player.items[entry.id]
        player.release(entry)
        if failed, player.actionAtItemEnd == .advance, let item, player.currentItem === item {
            makeFirstQueuedItemCurrent()
        }
    }

    /// Everything queued was heard: with `.advance`, nothing is current any more.
    mutating func playerHeardQueueEnd() {
        if player.actionAtItemEnd == .advance { player.makeCurrent(nil) }
    }
}

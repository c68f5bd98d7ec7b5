import FoundationEssentials

/// The repeat modes (`QueuePlayer/repeatMode`) as transitions of the engine's one state. An entry repeats as a new
/// entry of the same location with a new item, queued the moment the entry has been decoded to its end (by the
/// decoding thread, so the sound goes on without a gap), or when it is skipped under `.all`. An entry that failed,
/// or was removed, is not repeated.
extension PlaybackEngine.State {
    /// Queues `entry`, just decoded to its end, again: after itself under `.one`, at the end under `.all`. Once per
    /// entry; nothing with repeat off, or for an entry no longer queued.
    mutating func queueRepetition(of entry: QueueEntry) {
        guard player.repeatMode != .off, let item = player.items[entry.id], player.repetitions[entry.id] == nil else {
            return
        }
        let repetition = newEntries(for: [entry.location])[0]
        switch player.repeatMode {
        case .off: return
        case .one:
            // Right after the entry: with a restart waiting, `pending` is the whole order, the entry in it.
            let position = waitingRestart == nil ? 0 : (pending.firstIndex(of: entry).map { $0 + 1 } ?? 0)
            pending.insert(repetition, at: position)
        case .all:
            pending.append(repetition)
        }
        player.register([item.repetition()], as: [repetition])
        player.repetitions[entry.id] = repetition
        player.playbackRanges[repetition.id] = player.playbackRanges[entry.id]
        forgetQueueEndReport()
    }

    /// `left`, the first entry, is being skipped: under `.all` it goes to the end of the queue (unless it is there
    /// already), under `.one` its repetition goes, so that the next entry plays (and repeats).
    mutating func settleRepetition(ofSkipped left: QueueEntry, audibleFrame audible: Int, into actions: inout [Action])
    {
        switch player.repeatMode {
        case .off: return
        case .one: dropRepetition(of: left, audibleFrame: audible, into: &actions)
        case .all:
            guard player.repetitions[left.id] == nil, let item = player.items[left.id] else { return }
            let repetition = insertItems([item.repetition()], after: nil, audibleFrame: audible, into: &actions)[0]
            player.repetitions[left.id] = repetition
            player.playbackRanges[repetition.id] = player.playbackRanges[left.id]
        }
    }

    /// Takes `entry`'s repetition out of the queue, if one is queued, and the repetition's own, and so on (decoding
    /// runs ahead of what is heard, so under `.one` several may be queued): the entry was removed, or left.
    mutating func dropRepetition(of entry: QueueEntry, audibleFrame audible: Int, into actions: inout [Action]) {
        var original = entry
        while let repetition = player.repetitions.removeValue(forKey: original.id) {
            if order.contains(repetition) {
                actions += remove(repetition, audibleFrame: audible)
                player.release(repetition)
            }
            original = repetition
        }
    }

    /// Sets what plays again. Repetitions queued under the old mode that have not begun to play are taken out; the
    /// entries already decoded to their end are queued again under the new one, so the current item is not passed
    /// over.
    mutating func setRepeatMode(_ mode: QueuePlayer.RepeatMode, audibleFrame audible: Int, into actions: inout [Action])
    {
        guard mode != player.repeatMode else { return }
        for original in player.repetitions.keys.sorted() {
            guard let entry = order.first(where: { $0.id == original }) else { continue }
            dropRepetition(of: entry, audibleFrame: audible, into: &actions)
        }
        player.repeatMode = mode
        for entry in timeline.decodedToTheirEnd { queueRepetition(of: entry) }
        actions.append(.wakeDecoder)
    }
}

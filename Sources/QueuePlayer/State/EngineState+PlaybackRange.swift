import FoundationEssentials

/// Playback ranges (`QueuePlayer/setPlaybackRange(_:of:)`) as transitions of the engine's one state: an entry plays
/// the part of its item its range names, in place of the whole item.
extension PlaybackEngine.State {
    /// Makes `entry` play `range` of its item (nil: all of it). False, and nothing changes, for the first entry of
    /// the order (the current one) unless the player is stopped, or an entry not queued. An entry already decoded
    /// ahead is decoded again, the one being heard going on unbroken; one not decoded yet takes its range when it is
    /// opened; the first entry of a stopped player starts again from its (new) start.
    mutating func setPlaybackRange(
        _ range: MediaTimeRange?, of entry: QueueEntry, audibleFrame audible: Int, into actions: inout [Action]
    ) -> Bool {
        let order = order
        let isFirst = order.first == entry
        guard !phase.isFinal, order.contains(entry), !isFirst || player.isStopped else { return false }
        guard player.playbackRanges[entry.id] != range else { return true }
        player.playbackRanges[entry.id] = range
        let decoded = timeline.entries + (opening.map { [$0] } ?? [])
        if isFirst {
            actions += startAfresh(with: order)
        } else if waitingRestart == nil, decoded.contains(entry) {
            actions += [.failSeeks(reorder(to: order, audibleFrame: audible, redecoding: true)), .wakeDecoder]
        }
        return true
    }

    /// Whether `range` can be an entry's playback range: it starts at a time of zero or more and lasts a positive
    /// time, or to the item's end (``MediaTime/positiveInfinity``).
    static func isPlayable(_ range: MediaTimeRange) -> Bool {
        guard range.start.isNumeric, range.start >= .zero else { return false }
        return range.duration == .positiveInfinity || (range.duration.isNumeric && range.duration > .zero)
    }
}

import QueuePlayer
import QueuePlayerControl

/// Playback ranges given by front ends (MPD's `rangeid`, the socket's `range`): a queued item plays a part of itself
/// in place of the whole.
extension PlayerController {
    /// Makes `entry` play from `start` to `end` seconds into its item (nil: from its start, to its end; both nil: all
    /// of it). On the command path.
    func setRange(of entry: QueueEntry, start: Double?, end: Double?) throws(ControlError) {
        try ControlCommand.checkRange(start: start, end: end)
        let range = start == nil && end == nil ? nil : MediaTimeRange(seconds: start ?? 0, to: end)
        guard player.setPlaybackRange(range, of: entry) else {
            throw ControlError(
                "range: item \(entry.id) is the current item, which plays as it began; give a range to an item "
                    + "before it plays, or after `playerctl stop`")
        }
    }
}

extension MediaTimeRange {
    /// The range from `start` to `end` seconds (nil: the item's end), in microseconds.
    package init(seconds start: Double, to end: Double?) {
        let from = MediaTime(seconds: start, preferredTimescale: 1_000_000)
        let duration = end.map { MediaTime(seconds: $0 - start, preferredTimescale: 1_000_000) }
        self.init(start: from, duration: duration ?? .positiveInfinity)
    }
}

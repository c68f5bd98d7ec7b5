import QueuePlayerControl
import Synchronization

/// How long the daemon has been up and how long it has played since it started, for MPD's `stats`.
///
/// Threading: any thread.
package final class MPDPlayTime: Sendable {
    private let started = ContinuousClock.now
    /// The time played before the current stretch, and when the current stretch of playing began.
    private let played = Mutex<(before: Duration, since: ContinuousClock.Instant?)>((.zero, nil))

    package init() {}

    /// Notes whether the player plays now.
    package func note(_ status: PlaybackState) {
        let now = ContinuousClock.now
        played.withLock { played in
            if let since = played.since, status != .playing {
                played = (played.before + (now - since), nil)
            } else if played.since == nil, status == .playing {
                played.since = now
            }
        }
    }

    /// Whole seconds since the daemon started.
    var uptimeSeconds: Int64 { (ContinuousClock.now - started).components.seconds }

    /// Whole seconds played since the daemon started.
    var playingSeconds: Int64 {
        let now = ContinuousClock.now
        return played.withLock { played in
            played.before + (played.since.map { now - $0 } ?? .zero)
        }.components.seconds
    }
}

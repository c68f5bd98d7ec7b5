/// What one observer call reports, bound (as a task-local value) while its block runs.
///
/// A block runs on its own queue some time after its time fell due; with an unpaced sink the player may be items
/// further on by then. While the block runs, ``QueuePlayer/currentItem``, ``QueuePlayer/currentTime()``,
/// ``QueuePlayer/timeControlStatus``, ``QueuePlayer/reasonForWaitingToPlay``, ``QueuePlayer/rate`` and
/// ``QueuePlayer/playbackState`` answer from this picture, so they agree with what the call reports (AVFoundation's
/// contract, where the callback runs on the main queue that also changes the state).
struct ObserverCall: Sendable {
    /// The player's state as the call fell due.
    struct PlayerView: Sendable {
        let player: ObjectIdentifier
        /// How many commands the player had taken: a command given inside the call makes the view stale.
        let commandCount: Int
        let currentItem: PlayerItem?
        let rate: Float
        let reasonForWaitingToPlay: QueuePlayer.WaitingReason?
        /// Stopped since the last play (``QueuePlayer/playbackState``).
        let isStopped: Bool
    }

    /// The item time the call reports (for a current-item call, the new item's time).
    var time: MediaTime
    /// The player's state, when the observer belongs to a ``QueuePlayer``.
    var view: PlayerView? = nil

    /// The call being made on this thread, if any.
    @TaskLocal static var current: ObserverCall?

    /// The view of `player` while one of its observer calls runs on this thread, unless a command was given since.
    static func view(of player: AnyObject, commandCount: Int) -> PlayerView? {
        guard let view = current?.view, view.player == ObjectIdentifier(player), view.commandCount == commandCount
        else { return nil }
        return view
    }
}

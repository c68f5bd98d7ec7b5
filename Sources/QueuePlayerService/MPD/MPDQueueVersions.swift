import QueuePlayer
import Synchronization

/// The queue's version, as MPD's `playlist` number counts it: one more after every change of the queue, shared by
/// every connection, so that a client's `plchanges` since the number it read tells it whether to read the queue again.
///
/// Threading: any thread.
package final class MPDQueueVersions: Sendable {
    private let state = Mutex<(version: Int, queue: [QueueEntry], priorities: [Int: UInt8])>((1, [], [:]))

    package init() {}

    /// The version of the queue `state` holds: the last one's, or one more when it (or its priorities) differs from
    /// the queue last seen.
    package func version(of player: MPDPlayerState) -> Int {
        state.withLock { state in
            if state.queue != player.queue || state.priorities != player.priorities {
                state = (state.version + 1, player.queue, player.priorities)
            }
            return state.version
        }
    }
}

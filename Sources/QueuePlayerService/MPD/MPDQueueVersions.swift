import QueuePlayer
import Synchronization

/// The queue's version, as MPD's `playlist` number counts it: one more after every change of the queue, shared by
/// every connection, so that a client's `plchanges` since the number it read tells it whether to read the queue again.
///
/// Threading: any thread.
package final class MPDQueueVersions: Sendable {
    /// The version, and the queue it was given for.
    private let state = Mutex<(version: Int, queue: QueueListing)>((1, QueueListing(entries: [])))

    package init() {}

    /// The version of the queue `state` holds: the last one's, or one more when it (or its priorities, tags or
    /// ranges) differs from the queue last seen.
    package func version(of player: MPDPlayerState) -> Int {
        state.withLock { state in
            let queue = player.listing
            if state.queue != queue { state = (state.version + 1, queue) }
            return state.version
        }
    }
}

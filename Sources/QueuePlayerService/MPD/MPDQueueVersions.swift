import QueuePlayer
import Synchronization

/// The queue's version, as MPD's `playlist` number counts it: one more after every change of the queue, shared by
/// every connection, so that a client's `plchanges` since the number it read tells it whether to read the queue again.
///
/// Threading: any thread.
package final class MPDQueueVersions: Sendable {
    private let state = Mutex<(version: Int, queue: [QueueEntry])>((1, []))

    package init() {}

    /// The version of `queue`: the last one's, or one more when it differs from the queue last seen.
    package func version(of queue: [QueueEntry]) -> Int {
        state.withLock { state in
            if state.queue != queue { state = (state.version + 1, queue) }
            return state.version
        }
    }
}

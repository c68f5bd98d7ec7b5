import Dispatch
import Logging

/// What a decoder needs from the thread that opens it: a logger, and for a remote item, how to wait for bytes
/// without holding up the player.
///
/// A decoder that waits for the network waits on ``wake``, which its download signals when bytes arrive, and
/// returns early (failing with ``DecoderError/Code/interrupted``) as soon as ``isInterrupted`` is true: the engine
/// signals the same semaphore when it needs its decoding thread for a skip, a seek, an edit or shutdown.
/// A value type, safe to pass between threads; ``isInterrupted`` may be called from the opening thread only.
package struct DecoderContext: Sendable {
    /// Receives warnings about the item (damaged data skipped, a connection retried).
    package let logger: Logger
    /// Signalled when a waiting decoder may go on: bytes arrived, or ``isInterrupted`` may have become true.
    let wake: DispatchSemaphore
    /// True when the opening thread is wanted elsewhere and a wait for bytes must end.
    let isInterrupted: @Sendable () -> Bool

    /// A context for a thread of its own: waits end when bytes arrive or the download gives up.
    package init(logger: Logger) {
        self.init(logger: logger, wake: DispatchSemaphore(value: 0), isInterrupted: { false })
    }

    init(logger: Logger, wake: DispatchSemaphore, isInterrupted: @escaping @Sendable () -> Bool) {
        self.logger = logger
        self.wake = wake
        self.isInterrupted = isInterrupted
    }
}

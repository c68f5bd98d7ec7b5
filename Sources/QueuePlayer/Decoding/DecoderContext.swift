import Dispatch
import Logging

/// What a decoder needs from the thread that opens it: a logger, and for a remote item, how to wait for bytes
/// without holding up the player.
///
/// A decoder that waits for the network waits on ``wake``, which its download signals when bytes arrive, and
/// returns early (failing with ``DecoderError/Code/interrupted``) as soon as ``isInterrupted`` is true: the engine
/// signals the same semaphore when it needs its decoding thread for a skip, a seek, an edit or shutdown.
/// While the engine plays, a wait for bytes is also a watch on what is left to hear: once the output has played all
/// that was decoded, the wait is a stall, and the engine is told (``stalled``) so that it stops playing silence.
///
/// A value type, safe to pass between threads; its closures may be called from the opening thread only.
package struct DecoderContext: Sendable {
    /// Receives warnings about the item (damaged data skipped, a connection retried).
    package let logger: Logger
    /// Signalled when a waiting decoder may go on: bytes arrived, or ``isInterrupted`` may have become true.
    let wake: DispatchSemaphore
    /// True when the opening thread is wanted elsewhere and a wait for bytes must end.
    let isInterrupted: @Sendable () -> Bool
    /// While the output plays: the frames decoded and not yet heard, and the rate they play at; nil otherwise.
    let framesLeftToHear: @Sendable () -> (frames: Int, rate: Int)?
    /// Tells the engine that what was decoded has all been heard and the decoder still waits for bytes.
    let stalled: @Sendable () -> Void
    /// Told, on the download's thread, each failed attempt to reach a remote item's server, and nil once bytes
    /// come again or the download ends.
    let connectionChanged: @Sendable (ConnectionLoss?) -> Void
    /// True when something is queued after the item: a server that never answered is then given up in time
    /// (``ReconnectPolicy``). Any thread.
    let hasItemAfter: @Sendable () -> Bool

    /// A context for a thread of its own: waits end when bytes arrive or the download gives up, as if other items
    /// followed.
    package init(logger: Logger) {
        self.init(
            logger: logger, wake: DispatchSemaphore(value: 0), isInterrupted: { false }, framesLeftToHear: { nil },
            stalled: {}, connectionChanged: { _ in }, hasItemAfter: { true })
    }

    init(
        logger: Logger, wake: DispatchSemaphore, isInterrupted: @escaping @Sendable () -> Bool,
        framesLeftToHear: @escaping @Sendable () -> (frames: Int, rate: Int)?, stalled: @escaping @Sendable () -> Void,
        connectionChanged: @escaping @Sendable (ConnectionLoss?) -> Void, hasItemAfter: @escaping @Sendable () -> Bool
    ) {
        self.logger = logger
        self.wake = wake
        self.isInterrupted = isInterrupted
        self.framesLeftToHear = framesLeftToHear
        self.stalled = stalled
        self.connectionChanged = connectionChanged
        self.hasItemAfter = hasItemAfter
    }

    /// Waits until ``wake`` is signalled. While the output plays, it looks again when what is left to hear should
    /// have been heard, and reports a stall once nothing is left (10 ms or less) or the sound stands still.
    func waitForBytes() {
        var previous: Int?
        while let left = framesLeftToHear() {
            if left.frames <= left.rate / 100 || left.frames == previous {
                stalled()
                break
            }
            previous = left.frames
            let microseconds = max(10_000, left.frames * 1_000_000 / max(1, left.rate))
            if wake.wait(timeout: .now() + .microseconds(microseconds)) == .success { return }
        }
        wake.wait()
    }
}

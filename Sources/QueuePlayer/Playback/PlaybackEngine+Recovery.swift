import Dispatch

extension PlaybackEngine {
    /// The first wait between two attempts to reconnect the output, in milliseconds; it doubles up to
    /// ``longestReconnectWaitMilliseconds``.
    static let firstReconnectWaitMilliseconds = 50
    /// The longest wait between two attempts: a server that comes back is reached within this.
    static let longestReconnectWaitMilliseconds = 400

    /// How soon after the output came back a new loss counts as the same trouble going on (a server with no device
    /// to play on, which takes the connection and then fails every stream).
    static let sameTroubleSeconds = 2

    /// The wait before the next attempt to reconnect, kept by the event thread across losses: a loss soon after
    /// the output came back waits before trying again (growing as every attempt does), instead of trying at once
    /// in a loop, and is logged at debug level, not as news.
    struct ReconnectBackoff {
        var waitMilliseconds = firstReconnectWaitMilliseconds
        var restoredAt: ContinuousClock.Instant?

        /// True when a loss now follows the last restoration within ``sameTroubleSeconds``; otherwise the waits
        /// start again from the first.
        mutating func lossContinuesTrouble(now: ContinuousClock.Instant) -> Bool {
            guard let restoredAt, now - restoredAt < .seconds(sameTroubleSeconds) else {
                waitMilliseconds = firstReconnectWaitMilliseconds
                return false
            }
            return true
        }

        /// The wait to take now; the next one is twice as long, up to ``longestReconnectWaitMilliseconds``.
        mutating func nextWait() -> Int {
            defer { waitMilliseconds = min(waitMilliseconds * 2, longestReconnectWaitMilliseconds) }
            return waitMilliseconds
        }
    }

    /// On the event thread, after the output failed: takes up the loss (``State/takeUpOutputLoss(audibleFrame:)``:
    /// the frame being heard is held, the dead stream closed, ``PlaybackEvent/outputFailed(_:)`` posted), then
    /// reconnects with `backoff` (nothing busy-waits) until the server answers or the engine shuts down: the event
    /// thread's own blocking work, as decoding is the decoding thread's. Once back, ``State/outputRestored()``: the
    /// decoding thread reopens the stream, playback goes on from the frame heard when the output went away, and
    /// ``PlaybackEvent/outputRestored`` is posted. Returns false when there was nothing to recover.
    func recoverOutputIfLost(_ backoff: inout ReconnectBackoff) -> Bool {
        let audible = audibleFrame()
        guard let loss = state.withLock({ $0.takeUpOutputLoss(audibleFrame: audible) }) else { return false }
        let continuesTrouble = backoff.lossContinuesTrouble(now: .now)
        logger.log(
            level: continuesTrouble ? .debug : .warning,
            "audio output lost; waiting for it to come back, then resuming where it stopped: \(loss.error)",
            metadata: ["output": "\(sink.name)"])
        carryOut(loss.actions)
        if continuesTrouble { _ = reconnectWake.wait(timeout: .now() + .milliseconds(backoff.nextWait())) }
        guard reconnect(&backoff) else { return true }
        backoff.restoredAt = .now
        logger.log(
            level: continuesTrouble ? .debug : .notice, "audio output is back; playback goes on where it stopped",
            metadata: ["output": "\(sink.name)"])
        carryOut(state.withLock { $0.outputRestored() })
        return true
    }

    /// Asks the sink to reconnect until it does (true) or the engine shuts down (false), waiting `backoff`'s next
    /// wait between attempts.
    private func reconnect(_ backoff: inout ReconnectBackoff) -> Bool {
        while !isShuttingDown {
            do {
                try sink.reconnect()
                return true
            } catch {
                _ = reconnectWake.wait(timeout: .now() + .milliseconds(backoff.nextWait()))
            }
        }
        return false
    }
}

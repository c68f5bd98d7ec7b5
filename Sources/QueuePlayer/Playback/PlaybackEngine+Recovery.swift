import Dispatch

extension PlaybackEngine {
    /// The first wait between two attempts to reconnect the output, in milliseconds; it doubles up to
    /// ``longestReconnectWaitMilliseconds``.
    static let firstReconnectWaitMilliseconds = 50
    /// The longest wait between two attempts: a server that comes back is reached within this.
    static let longestReconnectWaitMilliseconds = 400

    /// On the event thread, after the output failed: notes the frame being heard, closes the dead stream, posts
    /// ``PlaybackEvent/outputFailed(_:)``, then reconnects with backoff (nothing busy-waits) until the server
    /// answers or the engine shuts down. Once back, the decoding thread reopens the stream and playback goes on
    /// from the frame heard when the output went away, and ``PlaybackEvent/outputRestored`` is posted. Returns
    /// false when there was nothing to recover.
    func recoverOutputIfLost() -> Bool {
        let audible = audibleFrame()
        guard let error = state.withLock({ $0.resumePoint(audibleFrame: audible) }) else { return false }
        frameHeardAtLoss.store(audible, ordering: .releasing)
        sink.stop()
        logger.warning(
            "audio output lost; waiting for it to come back, then resuming where it stopped: \(error)",
            metadata: ["output": "\(sink.name)"])
        post(.outputFailed(error))
        var wait = Self.firstReconnectWaitMilliseconds
        while !isShuttingDown {
            do {
                try sink.reconnect()
                break
            } catch {
                _ = reconnectWake.wait(timeout: .now() + .milliseconds(wait))
                wait = min(wait * 2, Self.longestReconnectWaitMilliseconds)
            }
        }
        guard !isShuttingDown else { return true }
        logger.notice("audio output is back; playback goes on where it stopped", metadata: ["output": "\(sink.name)"])
        carryOut(state.withLock { $0.outputRestored() })
        post(.outputRestored)
        return true
    }
}

import FoundationEssentials

extension PlaybackEngine {
    /// Whether ``play()`` waits until a remote item has its forward buffer before anything is heard
    /// (AVFoundation's `automaticallyWaitsToMinimizeStalling`, on by default). Off, playing starts at once, and
    /// after a stall it goes on as soon as bytes arrive again. A stall is a stall either way: silence is never
    /// reported as playing. Any thread.
    package var waitsToMinimizeStalls: Bool {
        get { state.withLock { $0.waitsToMinimizeStalls } }
        set {
            state.withLock { $0.waitsToMinimizeStalls = newValue }
            wakeDecoder()
        }
    }

    /// For the decoding context of `entry`: while the output plays, the frames decoded and not heard yet.
    func framesLeftToHear() -> (frames: Int, rate: Int)? {
        guard let rate = state.withLock({ $0.isPlaying && !$0.outputIsSuspended ? $0.streamRate : nil }) else {
            return nil
        }
        return (renderer.producedFrames - audibleFrame(), rate)
    }

    /// The decoder of `entry` ran out of bytes with everything decoded heard: the output pauses, and the stall is
    /// logged and posted. Decoding thread.
    func stalled(_ entry: QueueEntry) {
        let (isStall, actions) = state.withLock { $0.stall() }
        carryOut(actions)
        guard isStall else { return }
        logger.notice("\(entry.location) ran out of data; playback waits until enough has arrived")
        post(.stalled(entry))
    }

    /// While buffering: ends the wait and plays when `buffer` (nil: a local item, an item's end, the queue's end)
    /// holds enough, counting what is decoded ahead in the ring (its target, or with waiting to minimize stalls off,
    /// any byte). Returns false while the wait goes on. Decoding thread.
    @discardableResult
    func endBufferingIfReady(_ buffer: ForwardBuffer?) -> Bool {
        let (isBuffering, waitsForTarget, rate) = state.withLock { state in
            (state.phase == .buffering, state.waitsToMinimizeStalls, state.streamRate)
        }
        guard isBuffering else { return true }
        if let buffer {
            buffer.noteDecodedAhead(seconds: Double(renderer.producedFrames - audibleFrame()) / Double(rate))
            guard buffer.isReady(waitsForTarget: waitsForTarget) else { return false }
        }
        let (wasBuffering, actions) = state.withLock { $0.bufferedEnough() }
        carryOut(actions)
        if wasBuffering { post(.resumedAfterBuffering) }
        return true
    }
}

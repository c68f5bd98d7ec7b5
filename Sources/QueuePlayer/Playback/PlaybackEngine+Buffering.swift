import FoundationEssentials

extension PlaybackEngine.State {
    /// True when playing now would soon play silence: waiting to minimize stalls is on, and the remote item being
    /// decoded has less than its target buffered, or nothing is decoded and the item about to open is remote (before
    /// the first play, or after a preroll that has not opened it yet). Reads the item's ``ForwardBuffer`` (its lock is
    /// taken after the engine's, never before).
    var needsBuffering: Bool {
        guard waitsToMinimizeStalls else { return false }
        if let decodingBuffer { return !decodingBuffer.flags.isLikelyToKeepUp }
        guard timeline.isEmpty, let next = opening ?? firstInOrder else { return false }
        return URL.isRemoteItemLocation(next.location)
    }

    /// The rate the stream plays at: that of the item decoded last (a guess before the first).
    var streamRate: Int {
        timeline.segments.last(where: { $0.info != nil })?.info?.format.sampleRate ?? 44_100
    }

    /// The decoder ran out of bytes while everything decoded has been heard: a stall. Playing, the output pauses
    /// until enough is buffered again; true when it was playing (the stall is posted). Otherwise, nothing.
    mutating func stall() -> (isStall: Bool, actions: [Action]) {
        guard phase == .playing else { return (false, []) }
        phase = .buffering
        return (true, [.pauseOutput])
    }

    /// Enough is buffered, or nothing more is to be waited for (a local item, the queue's end, an item's end): a
    /// wait to minimize stalls ends and the output plays. True when there was one.
    mutating func bufferedEnough() -> (wasBuffering: Bool, actions: [Action]) {
        guard phase == .buffering else { return (false, []) }
        phase = .playing
        return (true, [.resumeOutput])
    }
}

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

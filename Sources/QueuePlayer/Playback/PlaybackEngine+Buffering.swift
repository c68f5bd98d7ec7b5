import FoundationEssentials

extension PlaybackEngine.State {
    /// True when playing now would soon play silence: waiting to minimize stalls is on, and the remote item being
    /// decoded has less than its target buffered, or (before the first play) the first item is remote and nothing
    /// of it has arrived. Reads the item's ``ForwardBuffer`` (its lock is taken after the engine's, never before).
    var needsBuffering: Bool {
        guard waitsToMinimizeStalls else { return false }
        if phase == .idle { return firstInOrder.map { URL.isRemoteItemLocation($0.path) } ?? false }
        return decodingBuffer.map { !$0.flags.isLikelyToKeepUp } ?? false
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
        logger.notice("\(entry.path) ran out of data; playback waits until enough has arrived")
        post(.stalled(entry))
    }

    /// Before decoding on, while buffering: waits until `buffer` (nil: a local item) holds enough to play on (its
    /// target, or with waiting to minimize stalls off, any byte), then plays. Returns early, still buffering, when
    /// the engine needs the thread (a restart, shutdown) or buffering ended otherwise (a pause). The buffer signals
    /// ``decoderWake`` when its flags change. Decoding thread.
    func endBufferingWhenReady(_ buffer: ForwardBuffer?) {
        while true {
            let (isBuffering, waitsForTarget) = state.withLock { state in
                (state.phase == .buffering && state.restart == nil, state.waitsToMinimizeStalls)
            }
            guard isBuffering else { return }
            guard let flags = buffer?.flags, !(waitsForTarget ? flags.isLikelyToKeepUp : !flags.isEmpty) else { break }
            decoderWake.wait()
        }
        let (wasBuffering, actions) = state.withLock { $0.bufferedEnough() }
        carryOut(actions)
        if wasBuffering { post(.resumedAfterBuffering) }
    }
}

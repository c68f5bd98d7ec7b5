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

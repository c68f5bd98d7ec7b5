import FoundationEssentials

extension PlaybackEngine {
    /// What the decoding thread does next, as ``State/nextDecoderStep()`` decides.
    enum DecoderStep {
        /// Drop what was decoded ahead and flush the output: a restart was taken up. `replaced` are the seek
        /// completions of one taken before and not carried out (to be told `false`); `reopensOutput` is true when
        /// the output was lost since the stream was opened (the old stream is gone); `continuing` is the ring
        /// frame the restarted audio continues, when it resumes what is being heard on the same stream; `number` is
        /// the restart's (``Restart/number``).
        case restart(replaced: [@Sendable (Bool) -> Void], reopensOutput: Bool, continuing: Int?, number: Int)
        /// Take back what was decoded from ring frame `atRingFrame` on, for restart `restartNumber` (an edit of
        /// what follows the item that ends there; see ``Restart/cutsAtRingFrame``), then tell
        /// ``State/cutDecodedAhead(atRingFrame:restartNumber:done:)`` whether it was done.
        case cut(atRingFrame: Int, restartNumber: Int)
        /// Open `entry` and decode it, from the frame of the restart that led here, if any.
        case open(QueueEntry, led: Restart?)
        /// Nothing is pending: mark the end of what was written, then ``State/settleIdle()``.
        case finishWriting
        /// The output is lost: wait until it is back (the event thread reconnects it).
        case waitForOutput
    }
}

/// The decoding and event threads' transitions. Like the commands, each is a pure change of the state under the
/// engine's lock; it returns what the thread does next, or the seek completions to tell once the lock is released.
extension PlaybackEngine.State {
    typealias DecoderStep = PlaybackEngine.DecoderStep
    typealias SeekCompletions = [@Sendable (Bool) -> Void]

    /// The decoding thread asks what to do: wait for a lost output, take up a waiting restart (emptying the
    /// timeline, whose frames are being dropped), take the next pending entry, or finish writing.
    mutating func nextDecoderStep() -> DecoderStep {
        if phase.isOutputLost {
            activity = .waitingForOutput
            return .waitForOutput
        }
        if let taken = waitingRestart, !taken.reopensOutput, let frame = taken.cutsAtRingFrame {
            return .cut(atRingFrame: frame, restartNumber: taken.number)
        }
        if let taken = waitingRestart {
            waitingRestart = nil
            var replaced: SeekCompletions = []
            if case .restarting(let earlier) = activity { replaced = earlier.completions }
            timeline.removeAll()
            if !taken.keepsObservers { resetObserverProgress() }
            activity = .restarting(taken)
            let reopensOutput = taken.reopensOutput
            return .restart(
                replaced: replaced, reopensOutput: reopensOutput,
                continuing: reopensOutput ? nil : taken.continuesRingFrame, number: taken.number)
        }
        guard !pending.isEmpty else { return .finishWriting }
        var led: Restart?
        if case .restarting(let taken) = activity { led = taken }
        let entry = pending.removeFirst()
        activity = .opening(entry, led: led)
        return .open(entry, led: led)
    }

    /// The decoding thread took back what was decoded from ring frame `frame` on for restart `number` (`done`), or
    /// could not. Done: the timeline ends with the item that ends there, and the restart, if no other replaced it
    /// meanwhile, is carried out: the entries after that item are decoded next, and nothing heard changes. Not
    /// done: the restart is carried out as any other, its item decoded again from the frame heard.
    mutating func cutDecodedAhead(atRingFrame frame: Int, restartNumber number: Int, done: Bool) {
        if done {
            timeline.removeSegments(after: frame)
            activity = .betweenItems
        }
        guard var taken = waitingRestart, taken.number == number else { return }
        guard done else {
            taken.cutsAtRingFrame = nil
            waitingRestart = taken
            return
        }
        waitingRestart = nil
        if pending.first == taken.resumes { pending.removeFirst() }
        carriedOutRestartNumber = max(carriedOutRestartNumber, number)
    }

    /// The end of what was written is marked: the thread goes idle, unless entries or a restart arrived meanwhile
    /// (false: it asks again). A restart that led nowhere (its queue was emptied) has its seeks told `false`.
    mutating func settleIdle() -> (isIdle: Bool, unfinished: SeekCompletions) {
        guard pending.isEmpty, waitingRestart == nil, !phase.isOutputLost else { return (false, []) }
        var unfinished: SeekCompletions = []
        let endReported = queueEndIsReported
        if case .restarting(let taken) = activity { unfinished = taken.completions }
        activity = .idle(endReported: endReported)
        return (true, unfinished)
    }

    /// The entry being opened cannot be: it fails alone (recorded at ring frame `frame`) and the queue goes on.
    /// Returns the leading restart's seeks, to be told `true` (the seek was carried out; the item failed).
    mutating func openingFailed(_ error: DecoderError, atFrame frame: Int) -> SeekCompletions {
        guard case .opening(let entry, let led) = activity else { return [] }
        timeline.recordFailure(entry, error, atFrame: frame)
        activity = .betweenItems
        return led?.completions ?? []
    }

    /// The entry being opened is given up because the output failed, the engine stopped, or a skip, seek or edit cut
    /// short the wait for a remote item's first bytes: the restart set up holds it in its order, so it is opened
    /// again once that is carried out (or the output is back). Returns the seeks to tell `false`.
    mutating func abandonOpening() -> SeekCompletions {
        guard case .opening(_, let led) = activity else { return [] }
        activity = .betweenItems
        return led?.completions ?? []
    }

    /// The entry being opened is open, and its first frame will be ring frame `frame + resumeFrame`: it joins the
    /// timeline (announced as a start unless the restart that led here resumes it). Returns the leading restart's
    /// seeks, to be told `true`.
    mutating func opened(_ info: OpenedEntry, atFrame frame: Int, resumingAt resumeFrame: Int) -> SeekCompletions {
        guard case .opening(let entry, let led) = activity, entry == info.entry else { return [] }
        timeline.begin(info, atFrame: frame, resumingAt: resumeFrame, announcesStart: led?.resumes != entry)
        activity = .decoding
        return led?.completions ?? []
    }

    /// The item being decoded ended at ring frame `frame` (early if `failure`). Returns true when the thread must
    /// hold here (holding at item ends, with more to come).
    mutating func finishedItem(atFrame frame: Int, failure: DecoderError?) -> Bool {
        let finished = timeline.decoding
        timeline.endCurrent(atFrame: frame, failure: failure)
        if failure == nil, let finished { queueRepetition(of: finished) }
        let holds = holdsAtItemEnd && !pending.isEmpty
        activity = holds ? .holdingAtItemEnd(released: false) : .betweenItems
        return holds
    }

    /// True while the thread must go on holding: not released, no restart waiting, still holding at item ends.
    var keepsHolding: Bool {
        guard case .holdingAtItemEnd(let released) = activity else { return false }
        return !released && holdsAtItemEnd && waitingRestart == nil && !phase.isFinal
    }

    /// The thread leaves a hold.
    mutating func leaveHold() {
        if isHoldingAtItemEnd { activity = .betweenItems }
    }

    /// True when everything queued has been decoded and heard (the event thread then drains and reports the end),
    /// and the end has not been reported since the queue last changed.
    var queueIsDone: Bool {
        guard case .idle(endReported: false) = activity else { return false }
        return timeline.isEmpty && pending.isEmpty
    }

    /// The event thread has drained the output: true once per end of queue, if the queue is still done.
    mutating func takeQueueFinished() -> Bool {
        guard case .idle(endReported: false) = activity, pending.isEmpty else { return false }
        activity = .idle(endReported: true)
        return true
    }
}

import FoundationEssentials

extension PlaybackEngine.State {
    typealias Action = PlaybackEngine.Action
    typealias Restart = PlaybackEngine.Restart

    /// True between ``play()`` and ``pause()`` while the output runs.
    var isPlaying: Bool { phase == .playing }

    /// True between ``play()`` and ``pause()``, also while a lost output is waited for to play on.
    var isPlaybackRequested: Bool {
        switch phase {
        case .playing: true
        case .buffering: true
        case .outputLost(_, let resumesPlaying, _): resumesPlaying
        case .idle, .paused, .shutDown: false
        }
    }

    /// Playback wanted: starts the threads the first time, unpauses the output after a pause; or, while a remote
    /// item has too little buffered (``needsBuffering``), waits for it with the output paused. The decoding thread
    /// is woken, so that a wait for bytes watches for a stall from now on.
    mutating func play() -> [Action] {
        switch phase {
        case .idle:
            phase = needsBuffering ? .buffering : .playing
            return [.startThreads]
        case .paused:
            guard !needsBuffering else {
                phase = .buffering
                return [.wakeDecoder]
            }
            phase = .playing
            return [.resumeOutput, .wakeDecoder]
        case .outputLost(let error, _, let isTakenUp):
            phase = .outputLost(error, resumesPlaying: true, isTakenUp: isTakenUp)
            return []
        case .playing, .buffering, .shutDown:
            return []
        }
    }

    /// Playback prepared, not started: the threads start paused, so the first entry and the output open (the
    /// output paused) and decoding runs ahead; a ``play()`` then only resumes the output. After the first play or
    /// preroll, nothing to do.
    mutating func preroll() -> [Action] {
        guard phase == .idle else { return [] }
        phase = .paused
        return [.startThreads]
    }

    /// Playback not wanted: pauses the output, which keeps what it holds. Before the first play, nothing to do.
    mutating func pause() -> [Action] {
        if case .outputLost(let error, _, let isTakenUp) = phase {
            phase = .outputLost(error, resumesPlaying: false, isTakenUp: isTakenUp)
            return []
        }
        if phase == .buffering {
            // The output is paused already.
            phase = .paused
            return []
        }
        guard phase == .playing else { return [] }
        phase = .paused
        return [.pauseOutput]
    }

    /// Entries with new ids for `locations`, in order.
    mutating func newEntries(for locations: [String]) -> [QueueEntry] {
        locations.map { location in
            defer { nextEntryID += 1 }
            return QueueEntry(id: nextEntryID, location: location)
        }
    }

    /// Appends entries with new ids.
    mutating func enqueue(_ locations: [String]) -> ([QueueEntry], [Action]) {
        let entries = newEntries(for: locations)
        guard !phase.isFinal else { return (entries, []) }
        pending.append(contentsOf: entries)
        forgetQueueEndReport()
        return (entries, [.wakeDecoder])
    }

    /// Appends entries that keep their ids; later entries get ids above them.
    mutating func enqueue(restoring entries: [QueueEntry]) -> [Action] {
        nextEntryID = max(nextEntryID, (entries.map(\.id).max() ?? 0) + 1)
        guard !phase.isFinal else { return [] }
        pending.append(contentsOf: entries)
        forgetQueueEndReport()
        return [.wakeDecoder]
    }

    /// The first entry of the order starts at `frame` (counted at `rate`, or at the rate the item plays at) when
    /// playback reaches it, announced as a new start.
    mutating func cue(startFrame frame: Int, countedAt rate: Int? = nil) -> [Action] {
        guard !phase.isFinal else { return [] }
        pending = order
        return restart(
            with: Restart(startFrame: max(0, frame), startRate: rate, resumes: nil, keepsQueueEndReport: true))
    }

    /// Plays the first entry of the order from `frame`; false (and the completion told so) with an empty queue.
    mutating func seek(toFrame frame: Int, completion: (@Sendable (Bool) -> Void)?) -> (Bool, [Action]) {
        let completions = completion.map { [$0] } ?? []
        guard !phase.isFinal, let playing = order.first else { return (false, [.failSeeks(completions)]) }
        pending = order
        forgetQueueEndReport()
        let seek = Restart(startFrame: max(0, frame), resumes: playing, completions: completions)
        return (true, restart(with: seek))
    }

    /// Leaves the entry being heard for the next; releases a hold whose item has been heard to its end.
    mutating func advanceToNextItem() -> [Action] {
        guard !phase.isFinal else { return [] }
        if isHoldingAtItemEnd, waitingRestart == nil, timeline.isEmpty {
            // The item held at its end has been heard to its end: going on is moving to the next entry.
            activity = .holdingAtItemEnd(released: true)
            return [.wakeDecoder]
        }
        let order = order
        guard !order.isEmpty else { return [] }
        pending = Array(order.dropFirst())
        forgetQueueEndReport()
        return restart(with: Restart(startFrame: 0, resumes: nil))
    }

    /// Forgets every entry; the queue then finishes.
    mutating func removeAll() -> [Action] {
        guard !phase.isFinal else { return [] }
        pending = []
        forgetQueueEndReport()
        return restart(with: Restart(startFrame: 0, resumes: nil))
    }

    /// Stops (true) or stops no more (false) at each item's end; turning it off releases a hold.
    mutating func setHoldsAtItemEnd(_ holds: Bool) -> [Action] {
        holdsAtItemEnd = holds
        return [.wakeDecoder]
    }

    /// Sets the volume (at least 0). The same volume again changes nothing and asks for nothing.
    mutating func setVolume(_ new: Float) -> [Action] {
        let new = max(0, new)
        guard new != volume else { return [] }
        volume = new
        return [.applyGain]
    }

    /// Adds `delta` to the volume, keeping the result within 0...1.
    mutating func changeVolume(by delta: Float) -> [Action] {
        setVolume(min(1, max(0, volume + delta)))
    }

    /// Mutes or unmutes; the same setting again changes nothing and asks for nothing.
    mutating func setMuted(_ muted: Bool) -> [Action] {
        guard muted != isMuted else { return [] }
        isMuted = muted
        return [.applyGain]
    }

    /// The end: every waiting seek is told `false`, time observers are dropped (their blocks, which may hold the
    /// engine, are released), and the threads and output stop (once).
    mutating func shutDown() -> [Action] {
        let unfinished = waitingRestart?.completions ?? []
        waitingRestart?.completions = []
        let observers = timeObservers.values.map(\.observer)
        timeObservers = [:]
        guard phase != .shutDown else { return [.failSeeks(unfinished), .deactivateObservers(observers)] }
        phase = .shutDown
        return [.failSeeks(unfinished), .deactivateObservers(observers), .stopEverything]
    }

    /// The output failed: the engine waits for it, keeping a restart at the item being heard (its frame is set by
    /// ``takeUpOutputLoss(audibleFrame:)`` once the event thread has read where the sound stopped). Once per loss.
    mutating func outputFailed(_ error: AudioSinkError) -> [Action] {
        let resumesPlaying: Bool
        switch phase {
        case .shutDown, .outputLost: return []
        case .idle, .paused: resumesPlaying = false
        case .playing, .buffering: resumesPlaying = true
        }
        phase = .outputLost(error, resumesPlaying: resumesPlaying)
        if waitingRestart == nil {
            pending = order
            _ = replaceRestart(with: restartAfterLoss())
        }
        waitingRestart?.reopensOutput = true
        return [.recoverOutput]
    }

    /// Where playback goes on once a lost output is back, when no restart waits: the item being heard from the
    /// frame it resumed at (``takeUpOutputLoss(audibleFrame:)`` moves it to the frame heard); or the restart the
    /// decoding thread had taken and not finished (its seeks move along, and are told once it is carried out); or
    /// the start.
    private mutating func restartAfterLoss() -> Restart {
        if let playing = timeline.playing, playing.info != nil, pending.first == playing.entry {
            return Restart(
                startFrame: playing.resumeFrame, startRate: playing.info?.format.sampleRate, resumes: playing.entry,
                keepsObservers: true, keepsQueueEndReport: true)
        }
        switch activity {
        case .restarting(let taken):
            activity = .betweenItems
            return taken
        case .opening(let entry, let led?) where pending.first == entry:
            var moved = led
            moved.completions = []
            activity = .opening(entry, led: moved)
            return led
        default:
            return Restart(startFrame: 0, resumes: nil, keepsObservers: true, keepsQueueEndReport: true)
        }
    }

    /// The event thread takes up a pending recovery: the restart resumes the item being heard at `audible`, the
    /// ring frame heard when the output went away. Returns the loss's error and what to do (hold the position
    /// there, close the dead stream, tell listeners), or nil when there is nothing to take up. Once per loss.
    mutating func takeUpOutputLoss(audibleFrame audible: Int) -> (error: AudioSinkError, actions: [Action])? {
        guard case .outputLost(let error, let resumesPlaying, isTakenUp: false) = phase else { return nil }
        phase = .outputLost(error, resumesPlaying: resumesPlaying, isTakenUp: true)
        if let waiting = waitingRestart, waiting.keepsObservers, let playing = timeline.playing,
            waiting.resumes == playing.entry
        {
            waitingRestart?.startFrame = max(playing.resumeFrame, audible - playing.startFrame)
            waitingRestart?.startRate = playing.info?.format.sampleRate
        }
        return (error, [.closeLostOutput(heardFrame: audible), .post(.outputFailed(error))])
    }

    /// The output is back: playing or paused as last asked; the waiting restart reopens the stream, and listeners
    /// are told.
    mutating func outputRestored() -> [Action] {
        guard case .outputLost(_, let resumesPlaying, _) = phase else { return [] }
        phase = resumesPlaying ? .playing : .paused
        return [.wakeDecoder, .post(.outputRestored)]
    }

    /// Makes `new` the waiting restart, replacing any: the replaced one's seeks are told `false`.
    mutating func restart(with new: Restart) -> [Action] {
        let replaced = replaceRestart(with: new)
        return (replaced.isEmpty ? [] : [.failSeeks(replaced)]) + [.wakeDecoder]
    }
}

extension PlaybackEngine.State {
    /// The sink reported its device suspended (`true`) or playing again; the event thread posts the change.
    mutating func outputSuspensionChanged(_ suspended: Bool) {
        outputIsSuspended = suspended
    }

}

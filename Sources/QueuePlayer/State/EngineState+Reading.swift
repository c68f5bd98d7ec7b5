extension PlaybackEngine {
    /// Where playback will start when nothing is being heard (paused before the first play, cued, between items,
    /// held at an item's end), or as soon as a skip, seek or cue is carried out (``status()`` still shows what was
    /// heard until then). Nil while an item is heard with nothing waiting, and when the queue is empty.
    package struct EntryStart: Sendable, Equatable {
        /// The entry that plays first.
        package var entry: QueueEntry
        /// Its details, once the decoding thread has opened it; nil before (read them with the decoder if needed).
        package var info: OpenedEntry?
        /// The frame of the item playback starts at.
        package var startFrame: Int
        /// The rate ``startFrame`` counts at when it was given at another rate than the item may play at (a restored
        /// position); nil: the rate the item plays at (``OpenedEntry/format``).
        package var startRate: Int? = nil
    }
}

/// What the state says is heard and what plays next: pure readings, for the engine's and the player's getters.
extension PlaybackEngine.State {
    /// What is being heard, given the ring frame heard now. An item resumed inside (a seek) is where it resumed until
    /// its first frame written is heard: the frames before that one are never written, and the ring frames heard
    /// meanwhile are older ones, or the sink's position before its flush was taken up.
    func status(audibleFrame audible: Int) -> PlaybackEngine.Status {
        let current = timeline.current
        let elapsed =
            current.map { min(max($0.resumeFrame, audible - $0.startFrame), $0.info?.frameCount ?? 0) } ?? 0
        return PlaybackEngine.Status(current: current?.info, elapsedFrames: elapsed, isPlaying: isPlaying)
    }

    /// The entry that plays next, and from where (see `PlaybackEngine/EntryStart`).
    var cuedStart: PlaybackEngine.EntryStart? {
        if let waitingRestart = waitingRestart ?? restartUnderWay {
            guard let entry = firstInOrder else { return nil }
            // A seek in the item being heard: its details are known already.
            let info = timeline.current?.info.flatMap { $0.entry == entry ? $0 : nil }
            return PlaybackEngine.EntryStart(
                entry: entry, info: info, startFrame: waitingRestart.startFrame, startRate: waitingRestart.startRate)
        }
        guard timeline.current == nil else { return nil }
        if let segment = timeline.playing {
            return PlaybackEngine.EntryStart(entry: segment.entry, info: segment.info, startFrame: segment.resumeFrame)
        }
        return order.first.map { PlaybackEngine.EntryStart(entry: $0, info: nil, startFrame: 0) }
    }

    /// The error the output was lost with, while it is lost.
    var outputError: AudioSinkError? {
        if case .outputLost(let error, _, _) = phase { return error }
        return nil
    }
}

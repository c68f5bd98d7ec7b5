extension PlaybackEngine.State {
    /// What falls due now that ring frames before `audible` have been heard, in the order it was heard: for each
    /// item, its start, the observer times inside it, then its end. So at a join the old item's end comes first, then
    /// the new item's start, then its first times. Segments are walked in order, so a jump over a whole item
    /// (unpaced playback) still reports every multiple in it. Event thread, under the engine's lock.
    mutating func dueDeliveries(audibleFrame audible: Int) -> [PlaybackEngine.Delivery] {
        var due: [PlaybackEngine.Delivery] = []
        while let first = timeline.segments.first {
            if let started = timeline.startFirst(ifHeardAt: audible) { due.append(.event(started)) }
            while let told = timeline.tellMark(ifHeardAt: audible) { due.append(.event(told)) }
            appendObserverTimes(in: first, audibleFrame: audible, to: &due)
            guard let finished = timeline.finishFirst(ifHeardAt: audible) else { break }
            due.append(.event(finished))
        }
        return due
    }

    /// Appends the observer times heard in `segment`, advancing each observer.
    private mutating func appendObserverTimes(
        in segment: PlaybackTimeline.EntrySpan, audibleFrame audible: Int, to due: inout [PlaybackEngine.Delivery]
    ) {
        guard let info = segment.info, audible > segment.firstWrittenFrame else { return }
        let rate = info.format.sampleRate
        let heard = min(audible, segment.endFrame ?? .max) - segment.startFrame
        for id in timeObservers.keys.sorted() {
            guard var progress = timeObservers[id] else { continue }
            let observer = progress.observer
            if progress.entryID != segment.entry.id {
                progress.entryID = segment.entry.id
                progress.nextIndex = observer.firstIndex(atOrAfterFrame: segment.resumeFrame, rate: rate)
                let jump = MediaTime(value: Int64(segment.resumeFrame), timescale: Int32(rate))
                if observer.isPeriodic, segment.resumeFrame > 0, jump != observer.time(at: progress.nextIndex) {
                    due.append(.time(observer, jump, segment.entry))
                }
            }
            while let time = observer.time(at: progress.nextIndex),
                TimeObserver.isHeard(time, heardFrames: heard, rate: rate)
            {
                due.append(.time(observer, time, segment.entry))
                progress.nextIndex += 1
            }
            timeObservers[id] = progress
        }
    }

    /// The ring frame whose hearing makes the next observer call due, for the event thread's sleep.
    var nextObserverFrame: Int? {
        guard let segment = timeline.playing, let info = segment.info else { return nil }
        let rate = Int64(info.format.sampleRate)
        return timeObservers.values.compactMap { progress -> Int? in
            guard progress.entryID == segment.entry.id else { return segment.firstWrittenFrame + 1 }
            guard let time = progress.observer.time(at: progress.nextIndex), time.isNumeric else { return nil }
            let (frame, _) = MediaTime.scale(time.value, by: rate, dividedBy: Int64(time.timescale))
            return frame.map { segment.startFrame + Int($0) + 1 }
        }.min()
    }

    /// Adds `observer`, started at `audible` (see ``startObserver(_:audibleFrame:)``), and returns its token. After
    /// shutdown none is kept: it would never be called, and its block would never be released.
    mutating func addTimeObserver(_ observer: TimeObserver, audibleFrame audible: Int) -> TimeObserverToken {
        defer { nextObserverID += 1 }
        let token = TimeObserverToken(id: nextObserverID, kind: .time)
        guard !phase.isFinal else { return token }
        var progress = PlaybackEngine.ObserverProgress(observer: observer)
        startObserver(&progress, audibleFrame: audible)
        timeObservers[token.id] = progress
        return token
    }

    /// Where a newly added observer starts: at the next multiple in the item being heard, or (before any item is
    /// heard) at 0 of the first.
    mutating func startObserver(_ progress: inout PlaybackEngine.ObserverProgress, audibleFrame audible: Int) {
        guard let segment = timeline.current, let info = segment.info else { return }
        progress.entryID = segment.entry.id
        progress.nextIndex = progress.observer.firstIndex(
            atOrAfterFrame: max(0, audible - segment.startFrame), rate: info.format.sampleRate)
    }
}

import FoundationEssentials

extension QueuePlayer {
    /// What a media-player front end shows: MPRIS's `PlaybackStatus`.
    public enum PlaybackState: Sendable, Equatable {
        /// After ``QueuePlayer/stop()`` (until the next ``QueuePlayer/play()``), or with nothing queued.
        case stopped
        /// Rate 0 with an item current: paused, or waiting for the first play.
        case paused
        /// Rate 1 with an item current.
        case playing
    }

    /// How many finished, failed or skipped files ``history()`` keeps.
    public static let historyLimit = 1000

    // MARK: Transport

    /// Stopped, paused or playing (see ``PlaybackState``). Any thread.
    public var playbackState: PlaybackState {
        guard !state.withLock({ $0.isStopped }), currentItem != nil else { return .stopped }
        return rate != 0 ? .playing : .paused
    }

    /// Pauses and moves the current item back to its start; ``playbackState`` is `.stopped` until ``play()``.
    /// Any thread.
    public func stop() {
        command {
            pause()
            state.withLock { $0.isStopped = true }
            restartCurrentItem(atFrame: 0, completion: nil)
            currentItem?.noteTime(.zero)
        }
    }

    /// Goes back one item: the newest file of ``history()`` is queued before the current item and plays, and the
    /// current item follows it (from its start). With an empty history, the current item starts again; with an
    /// empty queue, the file is queued and played. Any thread.
    public func returnToPreviousItem() {
        command {
            guard let last = state.withLock({ $0.history.popLast() }) else {
                restartCurrentItem(atFrame: 0, completion: nil)
                return
            }
            guard let current = engine.firstQueued() else {
                insertItems([PlayerItem(url: last)], after: nil)
                play()
                return
            }
            // Both queued before the skip, in one edit: the previous file may fail as soon as the skip lets the
            // decoding thread at it, and the current item must not follow an entry that is already gone.
            let currentItem = item(for: current) ?? PlayerItem(path: current.path)
            insertItems([PlayerItem(url: last), currentItem], after: current)
            skip(current)
        }
    }

    /// The files played to their end, failed or skipped, oldest first (at most ``historyLimit``): what
    /// ``returnToPreviousItem()`` goes back through. Any thread.
    public func history() -> [URL] {
        state.withLock { $0.history }
    }

    /// Replaces the history (restoring a saved one); only the newest ``historyLimit`` are kept. Any thread.
    public func restoreHistory(_ history: [URL]) {
        state.withLock { $0.history = Array(history.suffix(Self.historyLimit)) }
    }

    /// The current item, with its format, length and tags read from its file first when the player has not
    /// opened it yet (paused before the first play, cued, restored, reached by a skip while paused): its
    /// ``PlayerItem/status`` is then `.readyToPlay`, or `.failed` naming the file. Reads the file once per item
    /// (milliseconds); any thread.
    public func loadCurrentItem() -> PlayerItem? {
        guard let item = currentItem else { return nil }
        if item.status == .unknown {
            load(item)
            notifyPropertyObservers()
        }
        return item
    }

    /// Starts playback, unless the application is in the background without the `audio` mode (see
    /// ``BackgroundPlaybackPolicy/playUnlessBackgrounded()``): for a program that may start backgrounded. Any thread.
    public func playUnlessBackgrounded() {
        state.withLock { $0.backgroundPolicy }?.playUnlessBackgrounded()
    }

    /// Stops playback for good and closes the output; every ``playbackEvents()`` sequence finishes. The player
    /// answers getters afterwards but plays no more. Safe to call twice; any thread.
    public func shutdown() {
        engine.shutdown()
        let streams = state.withLock { state in
            defer { state.eventStreams = [:] }
            return Array(state.eventStreams.values)
        }
        streams.forEach { $0.finish() }
    }

    // MARK: Internals the transport shares

    /// Adds `url` to the history, dropping the oldest beyond the limit.
    func remember(_ url: URL) {
        state.withLock { state in
            state.history.append(url)
            if state.history.count > Self.historyLimit { state.history.removeFirst() }
        }
    }

    /// Starts the current item again at `frame`: a seek when it is being heard, a cue when it is not yet (so that
    /// its start is still announced when playback reaches it; `completion` is then told `true` at once). Returns
    /// false, having told `completion`, when nothing is queued.
    @discardableResult
    func restartCurrentItem(atFrame frame: Int, completion: (@Sendable (Bool) -> Void)?) -> Bool {
        let isHeard = engine.cuedStart() == nil && engine.status().current != nil
        if isHeard { return engine.seek(toFrame: frame, completion: completion) }
        guard engine.firstQueued() != nil else {
            completion?(false)
            return false
        }
        engine.cue(startFrame: frame)
        completion?(true)
        return true
    }

    /// The current item while it is held at its end (``actionAtItemEnd`` `.pause` or `.none`).
    func heldItem() -> PlayerItem? {
        state.withLock { Self.heldItem(in: $0) }
    }

    static func heldItem(in state: State) -> PlayerItem? {
        guard let held = state.heldEntryID, let current = state.currentItem, state.items[held] === current else {
            return nil
        }
        return current
    }

    /// `item`'s sample rate, reading its file first if the player has not opened it; nil when it cannot be read.
    func loadedSampleRate(_ item: PlayerItem) -> Int? {
        if item.status == .unknown { load(item) }
        let duration = item.duration
        return duration.isNumeric ? Int(duration.timescale) : nil
    }

    /// Reads `item`'s format, length and tags without decoding, marking it ready or failed.
    private func load(_ item: PlayerItem) {
        guard let entry = entry(for: item) else { return }
        do {
            item.markReady(try engine.openDecoder(item.url).info(for: entry))
        } catch {
            item.markFailed(error)
        }
    }
}

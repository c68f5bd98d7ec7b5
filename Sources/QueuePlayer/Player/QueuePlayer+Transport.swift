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
        let view = currentView()
        guard !view.isStopped, view.currentItem != nil else { return .stopped }
        return view.rate != 0 ? .playing : .paused
    }

    /// Pauses and moves the current item back to its start; ``playbackState`` is `.stopped` until ``play()``.
    /// Any thread.
    public func stop() {
        transition { state, actions in state.stopPlayer(into: &actions) }
        currentItem?.noteTime(.zero)
    }

    /// Goes back one item: the newest file of ``history()`` is queued before the current item and plays, and the
    /// current item follows it (from its start). With an empty history, the current item starts again; with an
    /// empty queue, the file is queued and played. Any thread.
    public func returnToPreviousItem() {
        let audible = engine.audibleFrame()
        transition { state, actions in state.returnToPreviousItem(audibleFrame: audible, into: &actions) }
    }

    /// The files played to their end, failed or skipped, oldest first (at most ``historyLimit``): what
    /// ``returnToPreviousItem()`` goes back through. Any thread.
    public func history() -> [URL] {
        read(\.player.history)
    }

    /// Replaces the history (restoring a saved one); only the newest ``historyLimit`` are kept. Any thread.
    public func restoreHistory(_ history: [URL]) {
        let kept = Array(history.suffix(Self.historyLimit))
        transition(isCommand: false) { state, _ in state.player.history = kept }
    }

    /// The current item, with its format, length and tags read from its file first when the player has not
    /// opened it yet (paused before the first play, cued, restored, reached by a skip while paused): its
    /// ``PlayerItem/status`` is then `.readyToPlay`, or `.failed` naming the file. Reads the file once per item
    /// (milliseconds); a remote item is not fetched here, and stays `.unknown` until the player opens it to play.
    /// Any thread.
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
        registry.withLock { $0.backgroundPolicy }?.playUnlessBackgrounded()
    }

    /// Stops playback for good and closes the output; every ``playbackEvents()`` sequence finishes. The player
    /// answers getters afterwards but plays no more. Safe to call twice; any thread.
    public func shutdown() {
        engine.shutdown()
        let streams = registry.withLock { state in
            defer { state.eventStreams = [:] }
            return Array(state.eventStreams.values)
        }
        streams.forEach { $0.finish() }
    }

    // MARK: Internals the transport shares

    /// `item`'s sample rate, reading its file first if the player has not opened it; nil when it cannot be read, and
    /// for a remote item the player has not opened yet.
    func loadedSampleRate(_ item: PlayerItem) -> Int? {
        if item.status == .unknown { load(item) }
        let duration = item.duration
        return duration.isNumeric ? Int(duration.timescale) : nil
    }

    /// Reads `item`'s format, length and tags without decoding, marking it ready or failed. A remote item is left
    /// as it is: its server is not waited for on a caller's thread.
    private func load(_ item: PlayerItem) {
        guard !item.url.isRemoteItem, let entry = entry(for: item) else { return }
        do {
            item.markReady(try engine.openDecoder(for: entry).info(for: entry))
        } catch {
            item.markFailed(error)
        }
    }
}

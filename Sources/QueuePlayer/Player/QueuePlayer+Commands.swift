import FoundationEssentials

/// Commands that read the player and change it, each in one step: a front end that read ``playbackState`` or
/// ``volume`` and then acted on it could lose a command sent by another front end in between (two toggles that
/// toggle once). Every front end of the daemon (its socket, MPRIS) sends these.
extension QueuePlayer {
    /// Pauses when ``playbackState`` is `.playing`, and otherwise plays, as one step: two calls at once from two
    /// threads toggle twice. Returns the state it asked for (`.playing` or `.paused`). Any thread.
    @discardableResult
    public func togglePlayPause() -> PlaybackState {
        // What play() reports before it starts, so that the time is where it starts. A toggle that turns out to
        // pause reports the same time once more, which an observer of times cannot tell from one report.
        if playbackState != .playing { engine.reportCurrentTime() }
        let paused = transition { state, actions -> Bool in
            guard state.isPlaybackRequested, !state.player.isStopped, state.shownCurrentItem != nil else {
                state.playPlayer(into: &actions)
                return false
            }
            state.pausePlayer(into: &actions)
            return true
        }
        if paused { currentItem?.noteTime(currentTime()) }
        return paused ? .paused : .playing
    }

    /// Adds `delta` to ``volume`` (negative lowers it), keeping the result within 0...1, as one step: two calls at
    /// once change it by both. Returns the new volume. Any thread.
    @discardableResult
    public func changeVolume(by delta: Float) -> Float {
        engine.changeVolume(by: delta)
    }

    /// Queues `urls` after the current item and plays the first of them now, the current item going to
    /// ``history()`` as after ``advanceToNextItem()``; with an empty queue, queues them and plays. One step: an
    /// item that ends meanwhile cannot make the skip pass over the new items. Returns their entries. Any thread.
    @discardableResult
    public func playNow(_ urls: [URL]) -> [QueueEntry] {
        playNow(urls.map(PlayerItem.init(url:)))
    }

    /// Queues `items` after the current item and plays the first of them now (see ``playNow(_:)-([URL])``): new
    /// items, set up as wanted first (``PlayerItem/startTime``). Returns their entries. Any thread.
    @discardableResult
    public func playNow(_ items: [PlayerItem]) -> [QueueEntry] {
        let audible = engine.audibleFrame()
        return transition { state, actions in
            let current = state.firstInOrder
            let entries = state.insertItems(items, after: current, audibleFrame: audible, into: &actions)
            if current != nil, !entries.isEmpty { state.advancePlayer(audibleFrame: audible, into: &actions) }
            state.playPlayer(into: &actions)
            return entries
        }
    }
}

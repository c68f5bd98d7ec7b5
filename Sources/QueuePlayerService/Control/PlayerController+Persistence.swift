import Dispatch
import FoundationEssentials
import Logging
import QueuePlayer
import QueuePlayerControl
import Synchronization

/// The state store's side of the controller: what is restored at start, and what is saved when it changes.
extension PlayerController {
    /// Queues what `store` saved, cued at the saved item and position, with the saved volume and end-of-item
    /// action; playback waits for `play`. Returns false when nothing was saved.
    package func restore() -> Bool {
        let saved: StateStore.Saved
        do {
            saved = try store.load()
        } catch {
            logger.error("cannot read the saved state in \(store.location): \(error); starting empty")
            return false
        }
        player.volume = saved.volume
        player.actionAtItemEnd = saved.holdsAtItemEnd ? .pause : .advance
        player.repeatMode = saved.loop.repeatMode
        // Before the queue: the saved order is the shuffled one, kept as it was.
        player.shuffleMode = saved.shuffles ? .items : .off
        player.replayGainMode = QueuePlayer.ReplayGainMode(saved.replayGain)
        player.restoreHistory(saved.history)
        state.withLock { state in
            state.singleOnce = saved.holdsOnce
            state.savedHistory = saved.history
            state.savedCheckpoint = Checkpoint(
                positionFrames: saved.positionFrames, positionSeconds: saved.positionSeconds, volume: saved.volume,
                holdsAtItemEnd: saved.holdsAtItemEnd, holdsOnce: saved.holdsOnce, loop: saved.loop,
                shuffles: saved.shuffles, replayGain: saved.replayGain, isPlaying: saved.wasPlaying)
        }
        guard let first = saved.queue.first else { return false }
        player.restore(
            saved.queue, startingAt: saved.position, priorities: saved.priorities, playbackRanges: saved.ranges)
        // Episodes are named as their feeds name them; the first entry starts at the saved position, episodes after
        // it where each was left.
        for (index, entry) in saved.queue.enumerated() {
            player.item(for: entry).map { recallEpisode($0, resumes: index > 0) }
        }
        state.withLock { state in
            state.entryTags = saved.tags
            state.savedQueue = QueueListing(
                entries: saved.queue, priorities: saved.priorities, tags: saved.tags, ranges: saved.ranges)
        }
        FreedMemory.release(afterQueueChangedFrom: 0, to: saved.queue.count)
        let position = fixedDecimals(saved.positionSeconds, places: 2)
        logger.info(
            "restored \(saved.queue.count) queued item(s) from \(store.location): \(first.displayName) at \(position) s"
        )
        return true
    }

    /// Writes the queue, the history and the position to the store, where they changed since last written.
    package func saveAll() {
        saveQueue()
        saveHistory()
        checkpoint()
    }

    /// Records the position (and volume, end-of-item action, playing or not) in the store, unless that is what
    /// it already holds.
    package func checkpoint() {
        // The time alone: reading the current item's tags here would scan its file at start-up, beside the
        // decoding thread opening it.
        let time = player.currentTime()
        let checkpoint = Checkpoint(
            positionFrames: time.isNumeric ? Int(time.value) : 0, positionSeconds: time.isNumeric ? time.seconds : 0,
            volume: player.volume, holdsAtItemEnd: player.actionAtItemEnd != .advance,
            holdsOnce: state.withLock(\.singleOnce), loop: LoopStatus(player.repeatMode),
            shuffles: player.shuffleMode == .items, replayGain: ReplayGain(player.replayGainMode),
            isPlaying: player.isPlaybackRequested)
        checkpointEpisode(at: time)
        save(checkpoint, as: \.savedCheckpoint, what: "the position") { checkpoint in
            try store.checkpoint(
                positionFrames: checkpoint.positionFrames, positionSeconds: checkpoint.positionSeconds,
                volume: checkpoint.volume, holdsAtItemEnd: checkpoint.holdsAtItemEnd, holdsOnce: checkpoint.holdsOnce,
                loop: checkpoint.loop, shuffles: checkpoint.shuffles, replayGain: checkpoint.replayGain,
                isPlaying: checkpoint.isPlaying)
        }
    }

    /// Writes the queue, its priorities, tags and ranges when they differ from what was written last (a 10,000-item
    /// queue takes milliseconds to write; comparing takes microseconds).
    private func saveQueue() {
        save(queueListing(), as: \.savedQueue, what: "the queue") { listing in
            try store.saveQueue(
                listing.entries, priorities: listing.priorities, tags: listing.tags, ranges: listing.ranges)
        }
    }

    /// Writes the player's history when it differs from what was written last.
    private func saveHistory() {
        save(player.history(), as: \.savedHistory, what: "the history") { try store.saveHistory($0) }
    }

    /// Writes `value` with `write` unless `saved` already holds it, and records it there once written; a failure
    /// is logged once, naming `what` and the store, and again only after a save of it has succeeded (a full disk
    /// would otherwise log every checkpoint).
    func save<Value: Equatable>(
        _ value: Value, as saved: WritableKeyPath<ControllerState, Value?>, what: String,
        write: (Value) throws -> Void
    ) {
        guard state.withLock({ $0[keyPath: saved] != value }) else { return }
        do {
            try write(value)
            let recovered = state.withLock { state in
                state[keyPath: saved] = value
                return state.failingSaves.remove(what) != nil
            }
            if recovered { logger.notice("\(what) is saved in \(store.location) again") }
        } catch {
            guard state.withLock({ $0.failingSaves.insert(what).inserted }) else { return }
            logger.error(
                "cannot save \(what) in \(store.location): \(error); playback goes on, and saving is retried")
        }
    }
}

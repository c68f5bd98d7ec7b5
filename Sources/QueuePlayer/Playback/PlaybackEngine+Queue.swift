import FoundationEssentials

extension PlaybackEngine {
    /// The play order: the entry being heard (or about to be) first, then the rest. Any thread.
    package func queue() -> [QueueEntry] {
        state.withLock { $0.order }
    }

    /// The number of entries in ``queue()``, in constant time. Any thread.
    package func queuedCount() -> Int {
        state.withLock { $0.orderCount }
    }

    /// Inserts `urls` after `entry` (nil: at the end) and returns their new entries; an `entry` no longer queued
    /// also appends. When the insertion point lies in audio already decoded ahead, the playing item goes on from
    /// the frame being heard and what follows is decoded again (sample-exact on a ``NullSink``; on PulseAudio the
    /// output is flushed, a gap of a few milliseconds). Any thread.
    @discardableResult
    package func insert(_ urls: [URL], after entry: QueueEntry?) -> [QueueEntry] {
        insert(locations: urls.map(\.itemLocation), after: entry)
    }

    /// ``insert(_:after:)`` for the items at `locations` (files' paths or remote URLs, kept as given: no `URL` is
    /// made). Any thread.
    @discardableResult
    package func insert(locations: [String], after entry: QueueEntry?) -> [QueueEntry] {
        let audible = audibleFrame()
        let (inserted, actions) = state.withLock { $0.insert(locations, after: entry, audibleFrame: audible) }
        carryOut(actions)
        return inserted
    }

    /// Removes `entry` from the queue. Removing the entry being heard moves on to the next, as
    /// ``advanceToNextItem()`` does; removing one decoded ahead re-decodes from the frame being heard, as
    /// ``insert(_:after:)`` does; an entry not queued is ignored. Any thread.
    package func remove(_ entry: QueueEntry) {
        let audible = audibleFrame()
        carryOut(state.withLock { $0.remove(entry, audibleFrame: audible) })
    }

    /// Moves `entry` to `index` in ``queue()`` (clamped), keeping its id. Moving an entry to the front plays it
    /// from its start; moving the entry being heard away from the front plays the new first entry from its start
    /// (the moved one plays again, from its start, when its turn comes). Returns false for an entry not queued.
    /// Any thread.
    @discardableResult
    package func move(_ entry: QueueEntry, to index: Int) -> Bool {
        let audible = audibleFrame()
        let (moved, actions) = state.withLock { $0.move(entry, to: index, audibleFrame: audible) }
        carryOut(actions)
        return moved
    }

    /// Removes every entry and stops playback; ``PlaybackEvent/queueFinished`` follows. Any thread.
    package func removeAll() {
        carryOut(state.withLock { $0.removeAll() })
    }
}

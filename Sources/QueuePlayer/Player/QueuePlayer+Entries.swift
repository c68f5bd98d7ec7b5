import FoundationEssentials

extension QueuePlayer {
    // MARK: The queue by entry

    /// The queue as entries, the current one first: each has an id that names its item while it is queued, for
    /// programs that let users name items (a control socket, a saved state). Any thread.
    public func entries() -> [QueueEntry] {
        engine.queue()
    }

    /// The number of ``entries()``, without copying them. Any thread.
    public var entryCount: Int { engine.queuedCount() }

    /// The item queued as `entry`, while it is queued or current. Any thread.
    public func item(for entry: QueueEntry) -> PlayerItem? {
        read { $0.player.items[entry.id] }
    }

    /// The entry `item` is queued as, while it is queued or current. Any thread.
    public func entry(for item: PlayerItem) -> QueueEntry? {
        read { $0.player.entry(for: item) }
    }

    /// Queues a new item for each of `urls` after `entry` (nil, or an entry no longer queued: at the end) and
    /// returns their entries, in order. Files are read when their turn to be decoded comes; check them first
    /// (``PlayerItem/checkPlayable(_:)``) to refuse bad ones up front. Any thread.
    @discardableResult
    public func insert(_ urls: [URL], after entry: QueueEntry?) -> [QueueEntry] {
        insert(urls.map(PlayerItem.init(url:)), after: entry)
    }

    /// Queues `items` after `entry` (see ``insert(_:after:)-([URL],_)``): new items, each of them queued nowhere
    /// else, set up as wanted first (``PlayerItem/startTime``). Returns their entries, in order. Any thread.
    @discardableResult
    public func insert(_ items: [PlayerItem], after entry: QueueEntry?) -> [QueueEntry] {
        let audible = engine.audibleFrame()
        return transition { state, actions in
            state.insertItems(items, after: entry, audibleFrame: audible, into: &actions)
        }
    }

    /// Queues the entries of a saved queue, keeping their ids (later entries get ids above them), with the first
    /// cued at `start` (in any timescale: it is converted to the rate the item plays at, exactly when they agree):
    /// ``play()`` starts there, announced as the item's start. The rate stays 0. Any thread.
    public func restore(_ entries: [QueueEntry], startingAt start: MediaTime) {
        restore(entries, startingAt: start, priorities: [:])
    }

    /// Queues the entries of a saved queue as ``restore(_:startingAt:)`` does, with the priorities they had (by entry
    /// id, as ``priorities()`` gave them), in the order given: nothing is shuffled again. Any thread.
    public func restore(_ entries: [QueueEntry], startingAt start: MediaTime, priorities: [Int: UInt8]) {
        restore(entries, startingAt: start, priorities: priorities, playbackRanges: [:])
    }

    /// Queues the entries of a saved queue as ``restore(_:startingAt:priorities:)`` does, each with the playback
    /// range it had (by entry id, as ``playbackRanges()`` gave them; the first entry's too, and `start` counts from
    /// its range's start). A range that is not a part (see ``setPlaybackRange(_:of:)``) is left out. Any thread.
    public func restore(
        _ entries: [QueueEntry], startingAt start: MediaTime, priorities: [Int: UInt8],
        playbackRanges: [Int: MediaTimeRange]
    ) {
        let ranges = playbackRanges.filter { PlaybackEngine.State.isPlayable($0.value) }
        transition { state, actions in
            state.restore(entries, startingAt: start, priorities: priorities, playbackRanges: ranges, into: &actions)
        }
    }

    /// Removes `entry`'s item (see ``remove(_:)-(PlayerItem)``); an entry no longer queued is ignored. Any thread.
    public func remove(_ entry: QueueEntry) {
        let audible = engine.audibleFrame()
        transition { state, actions in
            guard let item = state.player.items[entry.id] else { return }
            state.removeItem(item, audibleFrame: audible, into: &actions)
        }
    }

    /// Removes the items of `entries` in one change, as ``remove(_:)-(QueueEntry)`` removes each (the current one:
    /// the next one that stays plays); entries no longer queued are ignored. Any thread.
    public func remove(_ entries: [QueueEntry]) {
        let audible = engine.audibleFrame()
        transition { state, actions in state.removeEntries(entries, audibleFrame: audible, into: &actions) }
    }

    /// Moves `entry` to `index` of ``entries()`` (clamped to the queue); moving the current entry away from the
    /// front, or another to the front, makes the new first entry current at once and plays it from its start.
    /// Returns false when `entry` is not queued. Any thread.
    @discardableResult
    public func move(_ entry: QueueEntry, to index: Int) -> Bool {
        let audible = engine.audibleFrame()
        return transition { state, actions in state.moveEntry(entry, to: index, audibleFrame: audible, into: &actions) }
    }

    /// Puts the queue in the order of `entries`: every entry of ``entries()``, each once, in the order wanted (MPD's
    /// `shuffle`, `swap` and range `move` are each one such change). A new first entry is current at once and plays
    /// from its start, as after ``move(_:to:)``; the current entry kept first plays on unbroken. Returns false, and
    /// changes nothing, when `entries` is not the queue's entries in some order (the queue changed meanwhile: read
    /// it again). Any thread.
    @discardableResult
    public func rearrange(_ entries: [QueueEntry]) -> Bool {
        let audible = engine.audibleFrame()
        return transition { state, actions in
            state.rearrangeEntries(entries, audibleFrame: audible, into: &actions)
        }
    }

    // MARK: Priorities

    /// The priority of each queued entry that has one, by entry id; every other entry's is 0. Any thread.
    public func priorities() -> [Int: UInt8] {
        read(\.player.priorities)
    }

    /// Gives `entries` `priority` (0, the default, to 255), as MPD's `prio` does. While ``shuffleMode`` is on, the
    /// items after the current one play in groups of falling priority, each group in random order: an entry given a
    /// priority above the others' plays next, and one whose priority changes goes to a random place in its new group;
    /// items appended meanwhile join those without one. Unshuffled, a priority changes no order, and is kept for when
    /// shuffling uses it. The current entry has no priority (an entry's is cleared when it becomes current), and it is
    /// left as it is here, as are entries no longer queued. Any thread.
    public func setPriority(_ priority: UInt8, of entries: [QueueEntry]) {
        let audible = engine.audibleFrame()
        transition { state, actions in
            state.setPriority(priority, of: entries, audibleFrame: audible, into: &actions)
        }
    }

    // MARK: Playback ranges

    /// The part of its item that each queued entry playing a part plays (``setPlaybackRange(_:of:)``), by entry id;
    /// every other entry plays its whole item. Any thread.
    public func playbackRanges() -> [Int: MediaTimeRange] {
        read(\.player.playbackRanges)
    }

    /// Makes `entry` play only `range` of its item, as if that part were the whole item (nil: the whole item again),
    /// as MPD's `rangeid` does: the entry starts at the range's start, ends at its end (an open end: a `duration` of
    /// ``MediaTime/positiveInfinity``) and joins what follows there without a gap, and its times, duration and
    /// position count from the range's start. A range running past the item's end is cut there; one starting past
    /// it plays nothing. A live stream plays whole. An entry already decoded ahead is decoded again while the current
    /// one plays on unbroken, and the entry's repetitions play the same part. Returns false, changing nothing, for
    /// the current entry unless the player is stopped (``stop()``: it then starts at the new start), an entry not
    /// queued, or a range that starts before zero or does not last a positive time. Any thread.
    @discardableResult
    public func setPlaybackRange(_ range: MediaTimeRange?, of entry: QueueEntry) -> Bool {
        if let range, !PlaybackEngine.State.isPlayable(range) { return false }
        let audible = engine.audibleFrame()
        return transition { state, actions in
            state.setPlaybackRange(range, of: entry, audibleFrame: audible, into: &actions)
        }
    }
}

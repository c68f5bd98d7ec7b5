import FoundationEssentials

/// The player's part of the engine's state (`PlaybackEngine/State/player`): the item each queued entry plays, the
/// current item, and what the transport was told. It changes only in the player's transitions
/// (State/EngineState+Player.swift), under the engine's lock, in the same step as the queue and phase it depends on.
struct PlayerModel {
    /// The items of the entries queued, and of the current item: nothing else is kept.
    var items: [Int: PlayerItem] = [:]
    /// The entry id of each item in ``items``: its entry is that id and the item's path.
    var entryIDs: [ObjectIdentifier: Int] = [:]
    /// The item last made current; nil when the queue ran out or was emptied.
    var currentItem: PlayerItem?
    /// The entry of a current item held at its end after it finished: released once another item is current.
    var heldEntryID: Int?
    var actionAtItemEnd = QueuePlayer.ActionAtItemEnd.advance
    var repeatMode = QueuePlayer.RepeatMode.off
    var shuffleMode = QueuePlayer.ShuffleMode.off
    var replayGainMode = QueuePlayer.ReplayGainMode.off
    /// While shuffled, where each item after the current one was before shuffling, by entry id: the order that
    /// turning shuffle off puts back.
    var unshuffledRanks: [Int: Int] = [:]
    /// The priority of each queued entry that has one above 0, by entry id (`QueuePlayer/setPriority(_:of:)`).
    var priorities: [Int: UInt8] = [:]
    /// The part of each queued entry that plays, for those that play a part (`QueuePlayer/setPlaybackRange(_:of:)`);
    /// an entry's repetition plays the same part.
    var playbackRanges: [Int: MediaTimeRange] = [:]
    /// The entry queued to repeat each entry decoded to its end (or skipped) under a repeat mode, by the original's
    /// id, until the repetition itself is let go: so that an entry is repeated once, and a skip or removal of it
    /// settles its repetition (also while the original's end is being reported).
    var repetitions: [Int: QueueEntry] = [:]
    /// True from `QueuePlayer/stop()` until the next `QueuePlayer/play()`.
    var isStopped = false
    /// The files finished, failed or skipped, oldest first, at most `QueuePlayer/historyLimit`.
    var history: [URL] = []
    /// Counts the commands given, so that an observer call's picture goes stale once its block gives one.
    var commandCount = 0

    /// The entry `item` is queued as, while it is queued or current.
    func entry(for item: PlayerItem) -> QueueEntry? {
        entryIDs[ObjectIdentifier(item)].map { QueueEntry(id: $0, location: item.location) }
    }

    /// The current item while it is held at its end (``actionAtItemEnd`` `.pause` or `.none`).
    var heldItem: PlayerItem? {
        guard let heldEntryID, let currentItem, items[heldEntryID] === currentItem else { return nil }
        return currentItem
    }

    /// Maps each of `items` to its new entry.
    mutating func register(_ items: [PlayerItem], as entries: [QueueEntry]) {
        for (item, entry) in zip(items, entries) {
            self.items[entry.id] = item
            entryIDs[ObjectIdentifier(item)] = entry.id
        }
    }

    /// Forgets the item of an entry that left the queue (finished, failed, removed or skipped). The current item
    /// itself stays current (and held at its end, when it is) until the next one starts.
    mutating func release(_ entry: QueueEntry) {
        unshuffledRanks[entry.id] = nil
        priorities[entry.id] = nil
        playbackRanges[entry.id] = nil
        if let original = repetitions.first(where: { $0.value == entry })?.key { repetitions[original] = nil }
        guard let item = items.removeValue(forKey: entry.id) else { return }
        if currentItem === item, actionAtItemEnd != .advance {
            // Held at its end: items() still lists it, through its entry, until it stops being current.
            items[entry.id] = item
            heldEntryID = entry.id
            return
        }
        // The item may be queued again under a new entry (`QueuePlayer/returnToPreviousItem()`): that one stays.
        if entryIDs[ObjectIdentifier(item)] == entry.id {
            entryIDs[ObjectIdentifier(item)] = nil
        }
    }

    /// Makes `item` current; a previous item held at its end is let go. An item made current has no priority: a
    /// priority orders the entries to come.
    mutating func makeCurrent(_ item: PlayerItem?) {
        guard currentItem !== item else { return }
        if let item, let id = entryIDs[ObjectIdentifier(item)] { priorities[id] = nil }
        if let held = heldEntryID, let previous = currentItem, items[held] === previous {
            items[held] = nil
            entryIDs[ObjectIdentifier(previous)] = nil
            heldEntryID = nil
        }
        currentItem = item
    }

    /// Adds `url` to the history, dropping the oldest beyond the limit.
    mutating func remember(_ url: URL) {
        history.append(url)
        if history.count > QueuePlayer.historyLimit { history.removeFirst() }
    }

    /// Empties the queue's side of the model; the current item is left to the caller.
    mutating func forgetQueue() {
        items = [:]
        entryIDs = [:]
        repetitions = [:]
        unshuffledRanks = [:]
        priorities = [:]
        heldEntryID = nil
    }
}

import Dispatch
import FoundationEssentials
import Glibc
import Logging
import QueuePlayer
import QueuePlayerControl
import Synchronization

/// What the controller tells: snapshots of the player, and the subscriptions that receive each change.
extension PlayerController {
    /// The snapshot and the queue, read together, as MPRIS publishes them. Any thread.
    package func mprisState() -> MPRISState {
        telling.withLock { _ in MPRISState(snapshot: snapshot(), queue: player.entries()) }
    }

    /// What the player is doing now. Paused before the first play, cued at a restored position, between items or
    /// held at an item's end, it shows the item that plays next with its tags and length (a feed's words for an
    /// episode). Writes nothing.
    package func snapshot() -> PlayerSnapshot {
        let shown = currentEntry()
        let (jumps, details, given) = state.withLock { state in
            (
                state.jumps, shown.flatMap { state.episodeDetails[$0.entry.location] },
                shown.flatMap { state.entryTags[$0.entry.id] } ?? []
            )
        }
        // An episode is named as its feed names it: the episode's title, and its show for an album; until it is
        // opened, its length is the feed's. What the item does not say of itself, tags given to it say.
        let current = shown.map { shown in
            // Each of the item's getters reads it under its lock: the tags and the length once each.
            let (metadata, length) = (shown.item.metadata, shown.length)
            return EntryDetails(
                id: shown.entry.id, url: shown.entry.location,
                title: details?.title ?? metadata.title ?? given.values(named: "Title").first,
                artists: metadata.artists.isEmpty ? given.values(named: "Artist") : metadata.artists,
                album: details?.show ?? metadata.album ?? given.values(named: "Album").first,
                length: length == 0 ? details?.duration ?? 0 : length, isSeekable: shown.isSeekable,
                published: details?.publishedDay,
                stationName: metadata.stationName ?? given.values(named: "Name").first)
        }
        let status: PlaybackState =
            switch player.playbackState {
            case .stopped: .stopped
            case .paused: .paused
            case .playing: .playing
            }
        return PlayerSnapshot(
            status: status, position: shown?.seconds ?? 0, volume: Double(player.volume), current: current,
            jumps: jumps, hasNext: player.entryCount > 1, application: application.applicationState.description,
            waiting: player.reasonForWaitingToPlay.map { Self.describe($0, loss: shown?.item.connectionLoss) },
            loop: LoopStatus(player.repeatMode), single: modes.single, shuffle: player.shuffleMode == .items,
            replayGain: ReplayGain(player.replayGainMode))
    }

    /// The words a snapshot uses for why nothing is heard: for a remote item whose server is being asked again, what
    /// is waited for ("reconnecting to HOST: connection refused, next try in 2 s").
    private static func describe(_ reason: QueuePlayer.WaitingReason, loss: ConnectionLoss?) -> String {
        switch reason {
        case .noItemToPlay: "no item to play"
        case .outputUnavailable: "output unavailable"
        case .outputSuspended: "output suspended"
        case .toMinimizeStalls: loss?.description ?? "buffering"
        }
    }

    /// The snapshot at a position tick (inside its time observer's call, whose player is as it was at the tick's
    /// time), or nil when the tick's item is no longer queued: it ended after the tick was due, and the change that
    /// said so has been told, so the tick is old news that would otherwise be a subscriber's last word.
    private func positionSnapshot() -> PlayerSnapshot? {
        if let item = player.currentItem, player.entry(for: item) == nil { return nil }
        return snapshot()
    }

    /// The queue, its priorities, the tags given to its entries and their playback ranges, read now.
    package func queueListing() -> QueueListing {
        let entries = player.entries()
        return QueueListing(
            entries: entries, priorities: player.priorities(), tags: entryTags(of: entries),
            ranges: player.playbackRanges())
    }

    /// The player's current item, its tags read (from the file, once, when the player has not opened it yet).
    func currentEntry() -> CurrentEntry? {
        guard let item = player.loadCurrentItem(), let entry = player.entry(for: item) else { return nil }
        return CurrentEntry(entry: entry, item: item, time: player.currentTime())
    }

    /// The snapshots from now on: one at once, then one after every change. With `positionInterval` (seconds), also
    /// one at every multiple of it in the item's time while playing, and at pause, play and seek: for progress bars,
    /// and for tests that follow playback closely. Those come from a periodic time observer, so they cost nothing
    /// while paused, and a subscriber that does not ask for them (MPRIS, whose Position is read when asked for and
    /// never signalled) is not woken as the position moves. They stop when the stream's consumer goes.
    package func changes(positionInterval: Double? = nil) -> AsyncStream<PlayerSnapshot> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: PlayerSnapshot.self, bufferingPolicy: .bufferingNewest(16))
        let id = subscribe { snapshot, _ in continuation.yield(snapshot) }
        let positionObserver = positionInterval.map { interval in
            player.addPeriodicTimeObserver(
                forInterval: MediaTime(seconds: interval, preferredTimescale: 1000), queue: positionQueue
            ) { [weak self] _ in
                guard let self, let snapshot = positionSnapshot() else { return }
                continuation.yield(snapshot)
            }
        }
        continuation.onTermination = { [weak self, player, positionQueue] _ in
            self?.unsubscribe(id)
            guard let positionObserver else { return }
            // Not removed here: when the consuming task is cancelled (its connection closed), this runs under the
            // Swift runtime's lock on that task, which a position call in progress needs in order to yield, and the
            // removal waits for that call (the daemon hung so). On the observer's own queue no call is in progress.
            positionQueue.async { player.removeTimeObserver(positionObserver) }
        }
        return stream
    }

    /// What MPRIS publishes from now on: one at once, then one after every change of the snapshot or the queue,
    /// each a snapshot with the queue read with it. They stop when the stream's consumer goes.
    package func mprisStates() -> AsyncStream<MPRISState> {
        let (stream, continuation) = AsyncStream.makeStream(of: MPRISState.self, bufferingPolicy: .bufferingNewest(16))
        let id = subscribe { snapshot, queue in
            continuation.yield(MPRISState(snapshot: snapshot, queue: queue.entries))
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return stream
    }

    /// The snapshot and the queue, read together, as MPD's commands answer from them. Any thread.
    package func mpdState() -> MPDPlayerState {
        telling.withLock { _ in
            let current = currentEntry()?.item
            return MPDPlayerState(
                snapshot: snapshot(), listing: queueListing(), format: current?.format,
                bitRate: current?.estimatedDataRate)
        }
    }

    /// Calls `tell` with the snapshot and the queue now, then after every change of either, in order, on the thread
    /// that made the change and under the lock that orders the changes: it must return at once and call nothing of
    /// the controller (MPD's idle writes at once to a connection whose event loop made the change, and hands it to
    /// the others' loops). With `aspects`, first calls that at every possible change, with what a glance at the
    /// player shows it touched (possibly nothing), before the snapshot is taken: an observer that answers from that
    /// alone answers sooner (the snapshot and its comparison take several microseconds); `tell` follows in the same
    /// call of ``broadcast()`` when the snapshot or the queue changed. Returns what ``removeChangeObserver(_:)``
    /// takes.
    package func observeChanges(
        aspects: (@Sendable (PlayerAspects) -> Void)? = nil,
        _ tell: @escaping @Sendable (PlayerSnapshot, QueueListing) -> Void
    ) -> Int {
        subscribe(Subscriber(aspects: aspects, snapshot: tell))
    }

    /// Stops calling the observer ``observeChanges(aspects:_:)`` returned `id` for.
    package func removeChangeObserver(_ id: Int) { unsubscribe(id) }

    /// Registers `tell` as a subscriber told snapshots only.
    private func subscribe(_ tell: @escaping @Sendable (PlayerSnapshot, QueueListing) -> Void) -> Int {
        subscribe(Subscriber(aspects: nil, snapshot: tell))
    }

    /// Registers `subscriber` and tells it the snapshot and queue now; ``broadcast()`` tells it each change after.
    private func subscribe(_ subscriber: Subscriber) -> Int {
        telling.withLock { _ in
            let current = (snapshot: snapshot(), queue: queueListing())
            let settled = glance()
            let id = state.withLock { state in
                state.told = (current.snapshot, current.queue, settled)
                return state.subscribers.add(subscriber)
            }
            subscriber.snapshot(current.snapshot, current.queue)
            return id
        }
    }

    private func unsubscribe(_ id: Int) {
        state.withLock { _ = $0.subscribers.remove(id) }
    }

    /// Tells subscribers the current snapshot, if it or the queue changed since they were last told, and returns
    /// whether it told any. With no subscriber, costs nothing. They are told in the order they subscribed: the
    /// daemon's MPD listener, which answers an idling client on this thread, before MPRIS and the socket's
    /// followers, which wake tasks of their own. Those that take ``PlayerAspects`` are told them first, from a
    /// glance compared with the one taken after the last snapshot (so that a change is never told twice from
    /// glances; one made while a snapshot was taken is told by the snapshot's comparison).
    @discardableResult
    package func broadcast() -> Bool {
        telling.withLock { _ in
            let (subscribers, toldGlance) = state.withLock { ($0.subscribers.values, $0.told?.glance) }
            guard !subscribers.isEmpty else { return false }
            let takesAspects = subscribers.contains { $0.aspects != nil }
            if takesAspects {
                let touched = toldGlance.map { glance().changes(since: $0) } ?? []
                for subscriber in subscribers { subscriber.aspects?(touched) }
                // The snapshot takes several microseconds: a client just answered reads first.
                if !touched.isEmpty { Self.letToldClientsRead() }
            }
            let current = snapshot()
            let queue = queueListing()
            let settled = takesAspects ? glance() : nil
            let toldSnapshot = state.withLock { state -> [Subscriber] in
                defer { state.told?.glance = settled }
                if let told = state.told, told.snapshot == current, told.queue == queue { return [] }
                state.told = (current, queue, settled)
                return state.subscribers.values
            }
            for subscriber in toldSnapshot { subscriber.snapshot(current, queue) }
            return !toldSnapshot.isEmpty
        }
    }

    /// Tells subscribers what changed, then saves it when `saves`: on the thread of the change, so that a client
    /// told hears of it before the disk is written.
    func tellThenSave(saves: Bool) {
        let told = broadcast()
        guard saves else { return }
        // The save takes 0.1 to 0.15 ms.
        if told { Self.letToldClientsRead() }
        saveAll()
    }

    /// Yields the CPU once, before more work on this thread. A socket write wakes its reader on the writer's CPU, as
    /// if the writer were about to block, so the work that follows (a snapshot, a save) would keep a client just
    /// told waiting for that CPU; yielding lets the client read first: an idling MPD client read its answer 21 µs
    /// after it was written instead of 95 (medians on the 2-core benchmark machine; mpd answers and goes back to
    /// waiting).
    private static func letToldClientsRead() { sched_yield() }

    /// Notes what the player reported: what changed is told, then saved (as a command's change is).
    package func note(_ event: PlaybackEvent) {
        let changesWhatIsSaved: Bool
        switch event {
        case .itemFinished(let entry):
            episodeFinished(entry)
            singleItemFinished(entry)
            changesWhatIsSaved = true
        case .itemStarted:
            singleItemStarted()
            changesWhatIsSaved = true
        case .itemFailed, .queueFinished:
            changesWhatIsSaved = true
        case .itemReady, .metadataChanged, .outputFailed, .outputRestored, .outputSuspended, .outputResumed, .stalled,
            .resumedAfterBuffering, .liveGap:
            changesWhatIsSaved = false
        }
        tellThenSave(saves: changesWhatIsSaved)
    }
}

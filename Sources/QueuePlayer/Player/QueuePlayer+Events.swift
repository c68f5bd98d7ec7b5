extension QueuePlayer {
    /// Follows the engine, on the thread that posts each event (the event thread, or the decoding thread for
    /// ``PlaybackEvent/itemReady(_:)``), before any observer time heard after it is dispatched.
    func handle(_ event: PlaybackEvent) {
        switch event {
        case .itemReady(let info):
            item(for: info.entry)?.markReady(info)
        case .itemStarted(let info):
            // A command may have moved on since the start was heard (a skip, a move, a removal): the item it made
            // current stays so. An item that is no longer queued but still known ended on its own, heard through
            // to its end before this start was handled (a short item, or an unpaced sink): its end follows, and it
            // is current until then.
            if engine.firstQueued() == info.entry
                || (item(for: info.entry) != nil && !engine.queue().contains(info.entry))
            {
                setCurrentItem(item(for: info.entry))
            }
        case .itemFinished(let entry):
            remember(entry.url)
            guard let item = item(for: entry) else { break }
            item.noteTime(item.duration)
            if actionAtItemEnd == .pause {
                engine.pause()
            }
            post(.didPlayToEndTime(item))
            release(entry)
        case .itemFailed(let entry, let error):
            remember(entry.url)
            guard let item = item(for: entry) else { break }
            item.markFailed(error)
            post(.failedToPlayToEndTime(item, error))
            release(entry)
            // A current item that failed (reached by a skip or an edit) is never heard: the next one is current at
            // once, as after a skip, so that the current item is always the first of items().
            if actionAtItemEnd == .advance, state.withLock({ $0.currentItem === item }) {
                makeFirstQueuedItemCurrent()
            }
        case .queueFinished:
            if actionAtItemEnd == .advance { setCurrentItem(nil) }
        case .outputFailed, .outputRestored, .outputSuspended, .outputResumed:
            // The engine's state says so already; the property observers are told below.
            break
        }
        notifyPropertyObservers()
        for continuation in state.withLock({ Array($0.eventStreams.values) }) { continuation.yield(event) }
    }

    /// Makes `item` current and tells the current-item observers and streams, each call made with the new picture.
    func setCurrentItem(_ item: PlayerItem?) {
        let (previous, observers, streams) = state.withLock { state in
            defer { state.currentItem = item }
            return (state.currentItem, Array(state.currentItemObservers.values), Array(state.currentItemStreams.values))
        }
        guard previous !== item else { return }
        previous?.attach(to: nil)
        item?.attach(to: self)
        state.withLock { state in
            // A previous item held at its end is let go now.
            guard let held = state.heldEntryID, let previous, state.items[held] === previous else { return }
            state.items[held] = nil
            state.entryIDs[ObjectIdentifier(previous)] = nil
            state.heldEntryID = nil
        }
        let call = ObserverCall(time: .zero, view: liveView())
        for (gate, block) in observers { gate.run(call) { block(item) } }
        for continuation in streams { continuation.yield(item) }
    }

    /// Tells the notification observers and streams, each call made with the player's picture now.
    func post(_ notification: Notification) {
        let (observers, streams) = state.withLock {
            (Array($0.notificationObservers.values), Array($0.notificationStreams.values))
        }
        if !observers.isEmpty {
            let call = ObserverCall(time: currentTime(), view: liveView())
            for (gate, block) in observers { gate.run(call) { block(notification) } }
        }
        for continuation in streams { continuation.yield(notification) }
    }
}

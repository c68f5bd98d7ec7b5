extension QueuePlayer {
    /// Follows the engine, on the thread that posts each event (the event thread, or the decoding thread for
    /// ``PlaybackEvent/itemReady(_:)``), before any observer time heard after it is dispatched.
    func handle(_ event: PlaybackEvent) {
        switch event {
        case .itemReady(let info):
            let item = item(for: info.entry)
            item?.markReady(info)
            if let item, let buffer = read(\.decodingBuffer) {
                item.follow(buffer) { [weak self] in self?.notifyPropertyObservers() }
            }
        case .stalled(let entry):
            if let item = item(for: entry) { post(.playbackStalled(item)) }
        case .itemStarted(let info):
            transition(isCommand: false) { state, _ in state.playerHeardStart(of: info.entry) }
        case .metadataChanged(let entry, let metadata):
            if let item = item(for: entry) {
                item.changeMetadata(metadata)
                post(.timedMetadata(item, metadata))
            }
        case .itemFinished(let entry):
            let item = transition(isCommand: false) { state, actions in
                state.playerHeardEnd(of: entry, finished: true, into: &actions)
            }
            if let item {
                item.noteTime(item.duration)
                post(.didPlayToEndTime(item))
                transition(isCommand: false) { state, _ in state.playerReleased(entry, failed: false) }
            }
        case .itemFailed(let entry, let error):
            let item = transition(isCommand: false) { state, actions in
                state.playerHeardEnd(of: entry, finished: false, into: &actions)
            }
            if let item {
                item.markFailed(error)
                post(.failedToPlayToEndTime(item, error))
                transition(isCommand: false) { state, _ in state.playerReleased(entry, failed: true) }
            }
        case .queueFinished:
            transition(isCommand: false) { state, _ in state.playerHeardQueueEnd() }
        case .outputFailed, .outputRestored, .outputSuspended, .outputResumed, .resumedAfterBuffering, .liveGap:
            // The engine's state says so already; the property observers are told below.
            break
        }
        notifyPropertyObservers()
        for continuation in registry.withLock({ Array($0.eventStreams.values) }) { continuation.yield(event) }
    }

    /// Tells the current-item observers and streams that `item` replaced `previous`, each call made with the
    /// player's picture now.
    func tellCurrentItemChange(from previous: PlayerItem?, to item: PlayerItem?) {
        previous?.attach(to: nil)
        item?.attach(to: self)
        let (observers, streams) = registry.withLock {
            (Array($0.currentItemObservers.values), Array($0.currentItemStreams.values))
        }
        let call = ObserverCall(time: .zero, view: liveView())
        for (gate, block) in observers { gate.run(call) { block(item) } }
        for continuation in streams { continuation.yield(item) }
    }

    /// Tells the notification observers and streams, each call made with the player's picture now.
    func post(_ notification: Notification) {
        let (observers, streams) = registry.withLock {
            (Array($0.notificationObservers.values), Array($0.notificationStreams.values))
        }
        if !observers.isEmpty {
            let call = ObserverCall(time: currentTime(), view: liveView())
            for (gate, block) in observers { gate.run(call) { block(notification) } }
        }
        for continuation in streams { continuation.yield(notification) }
    }
}

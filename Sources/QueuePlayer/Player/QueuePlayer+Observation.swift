import Dispatch
import Synchronization

/// One observer of a player property (or a stream of its values): told the value after each change.
struct PropertyObserver: Sendable {
    /// The gate of a callback observer; nil for a stream.
    let gate: ObserverGate?
    /// Compares the property with the value told last and tells the new one; called after every change, with the
    /// player's picture at that moment.
    let notify: @Sendable (QueuePlayer, ObserverCall) -> Void
}

extension QueuePlayer {
    // MARK: Time

    /// Calls `block` on `queue` with the current item's time (in the item's sample rate) at every multiple of
    /// `interval` in the item's timeline (0, interval, 2 × interval, … from each item's start), once the frame at
    /// that time is heard; also once with the exact time when playback starts or pauses, and once at the new time
    /// after a seek. Two calls in a row never report the same time. With an unpaced ``NullSink`` the calls come as
    /// fast as decoding, in the same order. `interval` must be positive and numeric. Inside the block,
    /// ``currentItem`` is the item the time belongs to; at a join the new item's first call follows its
    /// current-item change. Any thread; the block never runs on the audio path. Remove it with
    /// ``removeObserver(_:)``.
    public func addPeriodicTimeObserver(
        forInterval interval: MediaTime, queue: DispatchQueue = .main,
        using block: @escaping @Sendable (MediaTime) -> Void
    ) -> ObserverToken {
        engine.addPeriodicTimeObserver(forInterval: interval, queue: queue, picture: timePicture, using: block)
    }

    /// Calls `block` on `queue` each time playback crosses one of `times` in an item's timeline: once per item for
    /// each time it crosses, as the frame at that time is heard. Times a seek jumps over are not reported, nor are
    /// start, stop and seek; non-numeric times are ignored. Any thread; the block never runs on the audio path.
    /// Remove it with ``removeObserver(_:)``.
    public func addBoundaryTimeObserver(
        forTimes times: [MediaTime], queue: DispatchQueue = .main, using block: @escaping @Sendable () -> Void
    ) -> ObserverToken {
        engine.addBoundaryTimeObserver(forTimes: times, queue: queue, picture: timePicture, using: block)
    }

    /// The picture a time observer's call is made with: the player now, with the time's item current; none (no
    /// call) for a time of an item that has left the player.
    private var timePicture: TimeObserver.Picture {
        { [weak self] time, entry in self?.liveView(entry: entry).map { ObserverCall(time: time, view: $0) } }
    }

    /// Same as ``removeObserver(_:)``.
    public func removeTimeObserver(_ token: ObserverToken) {
        removeObserver(token)
    }

    // MARK: Current item

    /// Calls `block` on `queue` with the new current item each time it changes (nil when the queue runs out). At a
    /// join it comes after the old item's did-play-to-end notification and before the new item's first time. Any
    /// thread; remove it with ``removeObserver(_:)``.
    public func addCurrentItemObserver(
        queue: DispatchQueue = .main, using block: @escaping @Sendable (PlayerItem?) -> Void
    ) -> ObserverToken {
        registry.withLock { state in
            defer { state.nextObserverID += 1 }
            state.currentItemObservers[state.nextObserverID] = (ObserverGate(queue: queue), block)
            return ObserverToken(id: state.nextObserverID, kind: .player)
        }
    }

    /// Same as ``removeObserver(_:)``.
    public func removeCurrentItemObserver(_ token: ObserverToken) {
        removeObserver(token)
    }

    /// The current item each time it changes, from now on. Each call returns a new sequence.
    public func currentItemChanges() -> AsyncStream<PlayerItem?> {
        stream(\.currentItemStreams)
    }

    /// The engine's events from now on (items opened, started, finished or failed, the queue finished, the output
    /// failed), each delivered after the player has applied it, so the getters agree with it. For services that
    /// log or persist per entry; observers are the way to render. Each call returns a new sequence; it finishes
    /// after ``shutdown()``. Any thread; buffered without limit, so read it or let it go.
    public func playbackEvents() -> AsyncStream<PlaybackEvent> {
        stream(\.eventStreams)
    }

    /// The item notifications from now on. Each call returns a new sequence.
    public func notifications() -> AsyncStream<Notification> {
        stream(\.notificationStreams)
    }

    /// Calls `block` on `queue` with each item notification, as `NotificationCenter` does with a queue. At a join,
    /// the old item's did-play-to-end comes before the current-item change. Any thread; remove it with
    /// ``removeObserver(_:)``.
    public func addNotificationObserver(
        queue: DispatchQueue = .main, using block: @escaping @Sendable (Notification) -> Void
    ) -> ObserverToken {
        registry.withLock { state in
            defer { state.nextObserverID += 1 }
            state.notificationObservers[state.nextObserverID] = (ObserverGate(queue: queue), block)
            return ObserverToken(id: state.nextObserverID, kind: .player)
        }
    }

    // MARK: Properties

    /// Calls `block` on `queue` with the new value of `property` each time it changes: for example `\.rate`,
    /// `\.timeControlStatus`, `\.reasonForWaitingToPlay`, `\.currentItem` or `\.currentItem?.status`. Not called
    /// for the value it has now. Inside the block the player's getters answer as of the change. Any thread; remove
    /// it with ``removeObserver(_:)``.
    public func observe<Value: Equatable & Sendable>(
        _ property: KeyPath<QueuePlayer, Value> & Sendable, queue: DispatchQueue = .main,
        using block: @escaping @Sendable (Value) -> Void
    ) -> ObserverToken {
        let gate = ObserverGate(queue: queue)
        let told = Mutex<Value?>(self[keyPath: property])
        return addPropertyObserver(
            PropertyObserver(gate: gate) { player, call in
                told.withLock { told in
                    let value = ObserverCall.$current.withValue(call) { player[keyPath: property] }
                    guard value != told else { return }
                    told = value
                    gate.run(call) { block(value) }
                }
            })
    }

    /// The values of `property` (see ``observe(_:queue:using:)``): the value it has now, then each new value. Each
    /// call returns a new sequence; it stops observing when its consumer goes away.
    public func values<Value: Equatable & Sendable>(
        of property: KeyPath<QueuePlayer, Value> & Sendable
    ) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self)
        let told = Mutex<Value?>(nil)
        let observer = PropertyObserver(gate: nil) { player, call in
            told.withLock { told in
                let value = ObserverCall.$current.withValue(call) { player[keyPath: property] }
                guard value != told else { return }
                told = value
                continuation.yield(value)
            }
        }
        let token = addPropertyObserver(observer)
        continuation.onTermination = { [weak self] _ in self?.removeObserver(token) }
        tellingPropertyObservers.withLock { _ in
            observer.notify(self, ObserverCall(time: currentTime(), view: liveView()))
        }
        return stream
    }

    /// Removes any observer this player or its engine returned a token for. Once this returns, no call of its block
    /// starts (a call running on another thread is waited for, unless this is called from inside an observer
    /// call, so observers may remove themselves and each other). Any thread, but not where the block in progress
    /// waits for the caller: an `AsyncStream`'s `onTermination`, for a block that yields to that stream, runs under
    /// the Swift runtime's lock on the cancelled consumer, which the yield needs; remove it from the block's queue.
    public func removeObserver(_ token: ObserverToken) {
        switch token.kind {
        case .time:
            engine.removeTimeObserver(token)
        case .player:
            let gates = registry.withLock { state in
                [
                    state.currentItemObservers.removeValue(forKey: token.id)?.0,
                    state.notificationObservers.removeValue(forKey: token.id)?.0,
                    state.propertyObservers.removeValue(forKey: token.id)?.gate,
                ]
            }
            gates.forEach { $0?.close() }
        }
    }

    private func addPropertyObserver(_ observer: PropertyObserver) -> ObserverToken {
        registry.withLock { state in
            defer { state.nextObserverID += 1 }
            state.propertyObservers[state.nextObserverID] = observer
            return ObserverToken(id: state.nextObserverID, kind: .player)
        }
    }

    /// Tells every property observer what changed. Never called with the player's lock held. Two threads telling at
    /// once take turns, the picture taken inside the turn: told out of order, a picture taken before a join reported
    /// the old current item after the new one (an observer saw join-1, join-2, join-1, join-2).
    func notifyPropertyObservers() {
        tellingPropertyObservers.withLock { _ in
            let observers = registry.withLock { Array($0.propertyObservers.values) }
            guard !observers.isEmpty else { return }
            let call = ObserverCall(time: currentTime(), view: liveView())
            for observer in observers { observer.notify(self, call) }
        }
    }

    private func stream<Element>(
        _ streams: WritableKeyPath<Registry, [Int: AsyncStream<Element>.Continuation]>
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        let id = registry.withLock { state in
            defer { state.nextObserverID += 1 }
            state[keyPath: streams][state.nextObserverID] = continuation
            return state.nextObserverID
        }
        continuation.onTermination = { [weak self] _ in
            // Ids are unique across every kind of observer.
            self?.registry.withLock { state in
                state.currentItemStreams[id] = nil
                state.notificationStreams[id] = nil
                state.eventStreams[id] = nil
            }
        }
        return stream
    }
}

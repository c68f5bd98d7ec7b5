import Dispatch
import FoundationEssentials
import Logging
import Synchronization

/// A queue of ``PlayerItem``s played in order, with the API iOS developers know from `AVQueuePlayer`.
///
/// Built on ``PlaybackEngine``: items join with no gap, the current item changes when its first frame is heard,
/// and times are the audible time. Every method may be called from any thread or task. Observers' blocks run on
/// the queues they were given; nothing runs on the audio callback.
///
/// Not yet here (see the project's issues): rates other than 0 and 1.
public final class QueuePlayer: BackgroundPausable, Sendable {
    /// What happens when the current item has been heard to its end.
    public enum ActionAtItemEnd: Sendable, Equatable {
        /// The next item plays, with no gap (the default for a queue player).
        case advance
        /// The player pauses (rate 0) with the finished item current, at its end; nothing of the next is heard.
        case pause
        /// The player does nothing: the finished item stays current at its end, the rate stays as it was.
        case none
    }

    /// Whether the player is playing, paused, or trying to play.
    public enum TimeControlStatus: Sendable, Equatable {
        /// Rate 0.
        case paused
        /// Rate 1, but nothing is heard; ``QueuePlayer/reasonForWaitingToPlay`` says why.
        case waitingToPlayAtSpecifiedRate
        /// Rate 1, and the current item is being heard.
        case playing
    }

    /// Why a player with rate 1 is not playing.
    public enum WaitingReason: Sendable, Equatable {
        /// The queue is empty.
        case noItemToPlay
        /// The audio output failed; the error names it.
        case outputUnavailable(AudioSinkError)
    }

    /// AVFoundation's item notifications, delivered through ``notifications()``.
    public enum Notification: Sendable, Equatable {
        /// The item's last frame was heard.
        case didPlayToEndTime(PlayerItem)
        /// The item could not be opened or decoded to its end.
        case failedToPlayToEndTime(PlayerItem, DecoderError)
        /// The current item's time jumped (a seek).
        case timeJumped(PlayerItem)
    }

    /// Identifies a current-item observer, for ``removeCurrentItemObserver(_:)``.
    public struct CurrentItemObserverToken: Hashable, Sendable {
        let id: Int
    }

    let engine: PlaybackEngine
    private let state = Mutex(State())

    private struct State {
        var items: [Int: PlayerItem] = [:]
        var entries: [ObjectIdentifier: QueueEntry] = [:]
        var currentItem: PlayerItem?
        var rate: Float = 0
        var actionAtItemEnd = ActionAtItemEnd.advance
        var outputError: AudioSinkError?
        var nextObserverID = 1
        var currentItemObservers: [Int: (DispatchQueue, @Sendable (PlayerItem?) -> Void)] = [:]
        var currentItemStreams: [Int: AsyncStream<PlayerItem?>.Continuation] = [:]
        var notificationStreams: [Int: AsyncStream<Notification>.Continuation] = [:]
        var backgroundPolicy: BackgroundPlaybackPolicy?
    }

    /// Creates a player that plays `items` through `sink`, paused until ``play()``. It follows `application`'s
    /// lifecycle (``BackgroundPlaybackPolicy``): without the `audio` background mode, entering the background
    /// pauses it.
    public init(items: [PlayerItem] = [], sink: any AudioSink, logger: Logger, application: Application = .shared) {
        engine = PlaybackEngine(sink: sink, logger: logger)
        for item in items where canInsert(item, after: nil) {
            insert(item, after: nil)
        }
        let policy = BackgroundPlaybackPolicy(player: self, application: application)
        state.withLock { $0.backgroundPolicy = policy }
        let events = engine.events
        Task.detached { [weak self] in
            for await event in events {
                guard let self else { return }
                self.handle(event)
            }
        }
    }

    deinit {
        engine.shutdown()
    }

    // MARK: The queue

    /// True at rate 1. Part of ``BackgroundPausable``.
    public var isPlaybackRequested: Bool { rate != 0 }

    /// The queued items, the current one first (also when it is held at its end).
    public func items() -> [PlayerItem] {
        let order = engine.queue()
        return state.withLock { state in
            let queued = order.compactMap { state.items[$0.id] }
            guard let current = state.currentItem, !queued.contains(current),
                let entry = state.entries[ObjectIdentifier(current)], !order.contains(entry),
                state.actionAtItemEnd != .advance
            else { return queued }
            return [current] + queued
        }
    }

    /// True when `item` is not queued already and `after` (nil: the end) is queued.
    public func canInsert(_ item: PlayerItem, after: PlayerItem?) -> Bool {
        let queued = Set(items())
        return !queued.contains(item) && (after.map(queued.contains) ?? true)
    }

    /// Queues `item` after `after` (nil: at the end). Does nothing when ``canInsert(_:after:)`` is false.
    public func insert(_ item: PlayerItem, after: PlayerItem?) {
        guard canInsert(item, after: after) else { return }
        let previous = after.flatMap { after in state.withLock { $0.entries[ObjectIdentifier(after)] } }
        guard let entry = engine.insert([item.url], after: previous).first else { return }
        state.withLock { state in
            state.items[entry.id] = item
            state.entries[ObjectIdentifier(item)] = entry
        }
    }

    /// Removes `item` from the queue; removing the current item plays the next one.
    public func remove(_ item: PlayerItem) {
        guard let entry = state.withLock({ $0.entries[ObjectIdentifier(item)] }) else { return }
        if state.withLock({ $0.currentItem === item }), !engine.queue().contains(entry) {
            // The current item ended and is held at its end (actionAtItemEnd .pause or .none): move on.
            engine.advanceToNextItem()
            if engine.queue().isEmpty { setCurrentItem(nil) }
            return
        }
        engine.remove(entry)
    }

    /// Empties the queue; the current item becomes nil.
    public func removeAllItems() {
        engine.removeAll()
    }

    /// Ends the current item and plays the next one.
    public func advanceToNextItem() {
        engine.advanceToNextItem()
    }

    // MARK: Playback

    /// Sets the rate to 1.
    public func play() {
        state.withLock { $0.rate = 1 }
        engine.play()
    }

    /// Sets the rate to 0.
    public func pause() {
        state.withLock { $0.rate = 0 }
        engine.pause()
        currentItem?.noteTime(currentTime())
    }

    /// Whether playback paused for entering the background resumes on return to the foreground (off by default,
    /// as on iOS).
    public var resumesAfterBackground: Bool {
        get { state.withLock { $0.backgroundPolicy?.resumesOnForeground ?? false } }
        set { state.withLock { $0.backgroundPolicy?.resumesOnForeground = newValue } }
    }

    /// 0 (paused) or 1 (playing). Setting any other nonzero value plays at 1.
    public var rate: Float {
        get { state.withLock { $0.rate } }
        set { newValue == 0 ? pause() : play() }
    }

    /// What happens when the current item ends; `.advance` by default. Any thread.
    public var actionAtItemEnd: ActionAtItemEnd {
        get { state.withLock { $0.actionAtItemEnd } }
        set {
            state.withLock { $0.actionAtItemEnd = newValue }
            engine.holdsAtItemEnd = newValue != .advance
        }
    }

    /// See ``PlaybackEngine/volume``.
    public var volume: Float {
        get { engine.volume }
        set { engine.volume = newValue }
    }

    /// See ``PlaybackEngine/isMuted``.
    public var isMuted: Bool {
        get { engine.isMuted }
        set { engine.isMuted = newValue }
    }

    /// Playing, paused, or waiting to play (see ``reasonForWaitingToPlay``).
    public var timeControlStatus: TimeControlStatus {
        guard rate != 0 else { return .paused }
        return reasonForWaitingToPlay == nil ? .playing : .waitingToPlayAtSpecifiedRate
    }

    /// Why a player with rate 1 is not playing, or nil.
    public var reasonForWaitingToPlay: WaitingReason? {
        let (rate, error, current) = state.withLock { ($0.rate, $0.outputError, $0.currentItem) }
        guard rate != 0 else { return nil }
        if let error { return .outputUnavailable(error) }
        return current == nil && items().isEmpty ? .noItemToPlay : nil
    }

    /// The item being heard (or, before the first frame, about to be); nil when the queue is empty.
    public var currentItem: PlayerItem? { state.withLock { $0.currentItem } ?? items().first }

    /// The current item's audible time, in its sample rate (its end, when it is held there); zero when there is no
    /// current item.
    public func currentTime() -> MediaTime {
        let status = engine.status()
        guard let item = status.current else {
            return state.withLock { $0.currentItem }.map { $0.duration.isNumeric ? $0.duration : .zero } ?? .zero
        }
        return MediaTime(value: Int64(status.elapsedFrames), timescale: Int32(item.format.sampleRate))
    }

    /// Moves the current item to `time`. With zero tolerances (the default) the position is sample-exact; wider
    /// tolerances are accepted and the seek is exact all the same. Returns false when there is no current item.
    /// `completionHandler` runs on `queue` with `true` once playback restarted at `time`, or `false` if the seek
    /// was refused or replaced by a later one.
    @discardableResult
    public func seek(
        to time: MediaTime, toleranceBefore: MediaTime = .zero, toleranceAfter: MediaTime = .zero,
        queue: DispatchQueue = .main, completionHandler: (@Sendable (Bool) -> Void)? = nil
    ) -> Bool {
        let completion = completionHandler.map { handler in
            { @Sendable (finished: Bool) in queue.async { handler(finished) } }
        }
        let itemRate = currentItem.map(\.duration).flatMap { $0.isNumeric ? Int($0.timescale) : nil }
        guard time.isNumeric, let rate = engine.status().current?.format.sampleRate ?? itemRate,
            case let frames = time.convertScale(Int32(rate)), frames.isNumeric
        else {
            completion?(false)
            return false
        }
        // The engine tells `completion` itself, refused or not.
        guard engine.seek(toFrame: Int(clamping: max(0, frames.value)), completion: completion) else { return false }
        if let item = currentItem {
            item.noteTime(time)
            post(.timeJumped(item))
        }
        return true
    }

    /// Moves the current item to `time` (sample-exact) and returns once playback restarted there: `true`, or
    /// `false` when there is no current item or a later seek replaced this one.
    public func seek(to time: MediaTime) async -> Bool {
        await withCheckedContinuation { continuation in
            seek(to: time, queue: .global()) { continuation.resume(returning: $0) }
        }
    }

    // MARK: Observation

    /// See ``PlaybackEngine/addPeriodicTimeObserver(forInterval:queue:using:)``.
    public func addPeriodicTimeObserver(
        forInterval interval: MediaTime, queue: DispatchQueue = .main,
        using block: @escaping @Sendable (MediaTime) -> Void
    ) -> TimeObserverToken {
        engine.addPeriodicTimeObserver(forInterval: interval, queue: queue, using: block)
    }

    /// See ``PlaybackEngine/addBoundaryTimeObserver(forTimes:queue:using:)``.
    public func addBoundaryTimeObserver(
        forTimes times: [MediaTime], queue: DispatchQueue = .main, using block: @escaping @Sendable () -> Void
    ) -> TimeObserverToken {
        engine.addBoundaryTimeObserver(forTimes: times, queue: queue, using: block)
    }

    /// See ``PlaybackEngine/removeTimeObserver(_:)``.
    public func removeTimeObserver(_ token: TimeObserverToken) {
        engine.removeTimeObserver(token)
    }

    /// Calls `block` on `queue` with the new current item each time it changes (nil when the queue runs out).
    public func addCurrentItemObserver(
        queue: DispatchQueue = .main, using block: @escaping @Sendable (PlayerItem?) -> Void
    ) -> CurrentItemObserverToken {
        state.withLock { state in
            defer { state.nextObserverID += 1 }
            state.currentItemObservers[state.nextObserverID] = (queue, block)
            return CurrentItemObserverToken(id: state.nextObserverID)
        }
    }

    /// Stops calls to a current-item observer not yet queued.
    public func removeCurrentItemObserver(_ token: CurrentItemObserverToken) {
        _ = state.withLock { $0.currentItemObservers.removeValue(forKey: token.id) }
    }

    /// The current item each time it changes, from now on. Each call returns a new sequence.
    public func currentItemChanges() -> AsyncStream<PlayerItem?> {
        stream(\.currentItemStreams)
    }

    /// The item notifications from now on. Each call returns a new sequence.
    public func notifications() -> AsyncStream<Notification> {
        stream(\.notificationStreams)
    }

    private func stream<Element>(
        _ streams: WritableKeyPath<State, [Int: AsyncStream<Element>.Continuation]>
    )
        -> AsyncStream<Element>
    {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        let id = state.withLock { state in
            defer { state.nextObserverID += 1 }
            state[keyPath: streams][state.nextObserverID] = continuation
            return state.nextObserverID
        }
        continuation.onTermination = { [weak self] _ in
            // Ids are unique across both kinds of stream.
            self?.state.withLock { state in
                state.currentItemStreams[id] = nil
                state.notificationStreams[id] = nil
            }
        }
        return stream
    }

    // MARK: Events

    private func item(for entry: QueueEntry) -> PlayerItem? {
        state.withLock { $0.items[entry.id] }
    }

    private func handle(_ event: PlaybackEvent) {
        switch event {
        case .itemReady(let info):
            item(for: info.entry)?.markReady(info)
        case .itemStarted(let info):
            setCurrentItem(item(for: info.entry))
        case .itemFinished(let entry):
            guard let item = item(for: entry) else { return }
            item.noteTime(item.duration)
            if actionAtItemEnd == .pause { pause() }
            post(.didPlayToEndTime(item))
        case .itemFailed(let entry, let error):
            guard let item = item(for: entry) else { return }
            item.markFailed(error)
            post(.failedToPlayToEndTime(item, error))
        case .queueFinished:
            if actionAtItemEnd == .advance { setCurrentItem(nil) }
        case .outputFailed(let error):
            state.withLock { $0.outputError = error }
        }
    }

    private func setCurrentItem(_ item: PlayerItem?) {
        let (previous, observers, streams) = state.withLock { state in
            defer { state.currentItem = item }
            return (state.currentItem, Array(state.currentItemObservers.values), Array(state.currentItemStreams.values))
        }
        guard previous !== item else { return }
        previous?.attach(to: nil)
        item?.attach(to: self)
        for (queue, block) in observers { queue.async { block(item) } }
        for continuation in streams { continuation.yield(item) }
    }

    private func post(_ notification: Notification) {
        let streams = state.withLock { Array($0.notificationStreams.values) }
        for continuation in streams { continuation.yield(notification) }
    }
}

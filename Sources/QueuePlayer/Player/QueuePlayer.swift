import Dispatch
import FoundationEssentials
import Logging
import Synchronization

/// A queue of ``PlayerItem``s played in order, with the API iOS developers know from `AVQueuePlayer`.
///
/// Built on the package's playback engine: items join with no gap, the current item changes when its first frame is
/// heard, and times are the audible time. Every method may be called from any thread or task. Observers' blocks run on
/// the queues they were given; nothing runs on the audio callback. Inside an observer's block the player's getters
/// (``currentItem``, ``currentTime()``, ``rate``, ``timeControlStatus``, ``reasonForWaitingToPlay``) answer as of
/// the moment the call fell due, so they agree with what the block is told, until the block itself gives a command.
///
/// Items are held only while they are queued or current: a player that plays for months does not grow.
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
        /// The sound server suspended the device the output plays on; playback goes on where it stands when the
        /// device plays again.
        case outputSuspended
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

    /// Identifies a current-item observer; the same token type as every other observer's.
    public typealias CurrentItemObserverToken = ObserverToken

    let engine: PlaybackEngine
    let logger: Logger
    let state = Mutex(State())
    /// Held while property observers are told, so that a picture taken earlier is never told after a later one.
    let tellingPropertyObservers = Mutex(())

    struct State {
        /// The items of the entries queued, and of the current item: nothing else is kept.
        var items: [Int: PlayerItem] = [:]
        /// The entry id of each item in ``items``: its entry is that id and the item's path.
        var entryIDs: [ObjectIdentifier: Int] = [:]
        var currentItem: PlayerItem?
        /// The entry of a current item held at its end after it finished: released once another item is current.
        var heldEntryID: Int?
        var actionAtItemEnd = ActionAtItemEnd.advance
        /// Counts the commands given, so that an observer call's picture goes stale once its block gives one.
        var commandCount = 0
        var nextObserverID = 1
        var currentItemObservers: [Int: (ObserverGate, @Sendable (PlayerItem?) -> Void)] = [:]
        var notificationObservers: [Int: (ObserverGate, @Sendable (Notification) -> Void)] = [:]
        var propertyObservers: [Int: PropertyObserver] = [:]
        var currentItemStreams: [Int: AsyncStream<PlayerItem?>.Continuation] = [:]
        var notificationStreams: [Int: AsyncStream<Notification>.Continuation] = [:]
        var eventStreams: [Int: AsyncStream<PlaybackEvent>.Continuation] = [:]
        var backgroundPolicy: BackgroundPlaybackPolicy?
        /// True from ``QueuePlayer/stop()`` until the next ``QueuePlayer/play()``.
        var isStopped = false
        /// The files finished, failed or skipped, oldest first, at most ``QueuePlayer/historyLimit``.
        var history: [URL] = []

        /// The entry `item` is queued as, while it is queued or current.
        func entry(for item: PlayerItem) -> QueueEntry? {
            entryIDs[ObjectIdentifier(item)].map { QueueEntry(id: $0, path: item.path) }
        }
    }

    /// Creates a player that plays `items` through a PulseAudio or PipeWire server, paused until ``play()``. It
    /// follows `application`'s lifecycle (``BackgroundPlaybackPolicy``): without the `audio` background mode,
    /// entering the background pauses it. `logger` receives warnings about items and the output, and refused
    /// requests.
    public convenience init(
        items: [PlayerItem] = [], sink: PulseAudioSink, logger: Logger, application: Application = .shared
    ) {
        self.init(items: items, sink: sink as any AudioSink, logger: logger, application: application)
    }

    /// Creates a player that plays `items` into a ``NullSink`` (no sound server: tests, benchmarks, a headless
    /// box without audio), paused until ``play()``; otherwise as the PulseAudio initializer.
    public convenience init(
        items: [PlayerItem] = [], sink: NullSink, logger: Logger, application: Application = .shared
    ) {
        self.init(items: items, sink: sink as any AudioSink, logger: logger, application: application)
    }

    /// Creates a player on any sink of the package's, such as a test's stepped sink.
    package init(
        items: [PlayerItem] = [], sink: any AudioSink, logger: Logger, application: Application = .shared
    ) {
        engine = PlaybackEngine(sink: sink, logger: logger)
        self.logger = logger
        engine.listen { [weak self] event in self?.handle(event) }
        for item in items where canInsert(item, after: nil) {
            insert(item, after: nil)
        }
        let policy = BackgroundPlaybackPolicy(player: self, application: application)
        state.withLock { $0.backgroundPolicy = policy }
    }

    deinit {
        engine.shutdown()
    }

    /// Runs a command: observer pictures taken before it go stale, and property observers hear what it changed.
    func command<Result>(_ body: () -> Result) -> Result {
        state.withLock { $0.commandCount += 1 }
        defer { notifyPropertyObservers() }
        return body()
    }

    // MARK: The queue

    /// True while playback is wanted: rate 1, also while the output is away. Part of ``BackgroundPausable``.
    public var isPlaybackRequested: Bool { engine.isPlaybackRequested }

    /// The queued items, the current one first (also when it is held at its end).
    public func items() -> [PlayerItem] {
        let order = engine.queue()
        return state.withLock { state in
            let queued = order.compactMap { state.items[$0.id] }
            guard let current = state.currentItem, !queued.contains(current),
                let entry = state.entry(for: current), !order.contains(entry),
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
        command {
            _ = insertItems([item], after: after.flatMap(entry(for:)))
        }
    }

    /// Removes `item` from the queue; removing the current item plays the next one.
    public func remove(_ item: PlayerItem) {
        guard let entry = state.withLock({ $0.entry(for: item) }) else { return }
        command {
            if state.withLock({ $0.currentItem === item }), !engine.queue().contains(entry) {
                // The current item ended and is held at its end (actionAtItemEnd .pause or .none): move on.
                engine.advanceToNextItem()
                if engine.firstQueued() == nil { setCurrentItem(nil) }
            } else {
                let wasCurrent = engine.firstQueued() == entry
                engine.remove(entry)
                if wasCurrent {
                    release(entry)
                    makeFirstQueuedItemCurrent()
                    return
                }
            }
            release(entry)
        }
    }

    /// Empties the queue; the current item becomes nil at once (its observers are told now).
    public func removeAllItems() {
        command {
            engine.removeAll()
            state.withLock { state in
                state.items = [:]
                state.entryIDs = [:]
                state.heldEntryID = nil
            }
            setCurrentItem(nil)
        }
    }

    /// Ends the current item and plays the next one. The item left goes into the ``history()``.
    public func advanceToNextItem() {
        command {
            guard let left = engine.firstQueued() else { return }
            remember(left.url)
            skip(left)
        }
    }

    /// Moves past `left`, the first entry, without remembering it.
    func skip(_ left: QueueEntry) {
        engine.advanceToNextItem()
        // The item left posts no end: it is let go here, and the next one is current at once, as in AVFoundation.
        if !engine.queue().contains(left) { release(left) }
        makeFirstQueuedItemCurrent()
    }

    /// Makes the item of the first queued entry current (nil with an empty queue), after a command left the
    /// current one.
    func makeFirstQueuedItemCurrent() {
        setCurrentItem(engine.firstQueued().flatMap(item(for:)))
    }

    /// Forgets the item of an entry that left the queue (finished, failed, removed or skipped). The current item
    /// itself stays current (and held at its end, when it is) until the next one starts.
    func release(_ entry: QueueEntry) {
        state.withLock { state in
            guard let item = state.items.removeValue(forKey: entry.id) else { return }
            if state.currentItem === item, state.actionAtItemEnd != .advance {
                // Held at its end: items() still lists it, through its entry, until it stops being current.
                state.items[entry.id] = item
                state.heldEntryID = entry.id
                return
            }
            // The item may be queued again under a new entry (``returnToPreviousItem()``): that one stays.
            if state.entryIDs[ObjectIdentifier(item)] == entry.id {
                state.entryIDs[ObjectIdentifier(item)] = nil
            }
        }
    }

    // MARK: Playback

    /// Sets the rate to 1.
    public func play() {
        command {
            state.withLock { $0.isStopped = false }
            engine.play()
        }
    }

    /// Prepares the first play, as AVPlayer's `preroll(atRate:)` does: the current item and the output open,
    /// paused, and decoding runs ahead, so that ``play()`` is heard at once. The rate stays 0 and nothing is heard.
    /// Does nothing once playing has started. Any thread.
    public func preroll() {
        command { engine.preroll() }
    }

    /// Sets the rate to 0.
    public func pause() {
        command {
            engine.pause()
            currentItem?.noteTime(currentTime())
        }
    }

    /// Whether playback paused for entering the background resumes on return to the foreground (off by default,
    /// as on iOS).
    public var resumesAfterBackground: Bool {
        get { state.withLock { $0.backgroundPolicy?.resumesOnForeground ?? false } }
        set { state.withLock { $0.backgroundPolicy?.resumesOnForeground = newValue } }
    }

    /// 0 (paused) or 1 (playing). Setting another value is refused: the rate stays as it was and the logger is told
    /// why (``setRate(_:)`` throws instead).
    public var rate: Float {
        get { currentView().rate }
        set {
            do {
                try setRate(newValue)
            } catch {
                logger.error("\(error)")
            }
        }
    }

    /// Sets the rate: 0 pauses, 1 plays; any other value throws ``PlayerError/Code/unsupportedRate`` and changes
    /// nothing.
    public func setRate(_ newRate: Float) throws(PlayerError) {
        switch newRate {
        case 0: pause()
        case 1: play()
        default: throw .unsupportedRate(newRate)
        }
    }

    /// What happens when the current item ends; `.advance` by default. Any thread.
    public var actionAtItemEnd: ActionAtItemEnd {
        get { state.withLock { $0.actionAtItemEnd } }
        set {
            command {
                state.withLock { $0.actionAtItemEnd = newValue }
                engine.holdsAtItemEnd = newValue != .advance
            }
        }
    }

    /// The playback volume, 0 (silent) to 1 (as decoded, the default); values above 1 amplify and may clip.
    /// Through PulseAudio it is the stream's volume in the server, heard within the sink's own latency; elsewhere
    /// (PipeWire, the ``NullSink``) it applies to frames rendered from now on, so through a server's buffer it is
    /// heard that much later. Any thread.
    public var volume: Float {
        get { engine.volume }
        set { engine.volume = newValue }
    }

    /// Silences playback without changing ``volume``. Any thread.
    public var isMuted: Bool {
        get { engine.isMuted }
        set { engine.isMuted = newValue }
    }

    /// Playing, paused, or waiting to play (see ``reasonForWaitingToPlay``).
    public var timeControlStatus: TimeControlStatus {
        let view = currentView()
        guard view.rate != 0 else { return .paused }
        return view.reasonForWaitingToPlay == nil ? .playing : .waitingToPlayAtSpecifiedRate
    }

    /// Why a player with rate 1 is not playing, or nil.
    public var reasonForWaitingToPlay: WaitingReason? { currentView().reasonForWaitingToPlay }

    /// The item being heard (or, before the first frame, about to be); nil when the queue is empty.
    public var currentItem: PlayerItem? { currentView().currentItem }

    /// The current item's audible time, in its sample rate (its end, when it is held there); zero when there is no
    /// current item. Inside an observer's block, the time the block was told.
    public func currentTime() -> MediaTime {
        if let call = ObserverCall.current, ObserverCall.view(of: self, commandCount: commandCount) != nil {
            return call.time
        }
        if let held = heldItem() { return held.duration.isNumeric ? held.duration : .zero }
        if let cue = engine.cuedStart(), let current = currentItem, entry(for: current) == cue.entry {
            // The current item is not being heard (paused before it started, cued, or a seek is under way).
            guard cue.startFrame > 0 else { return .zero }
            let sampleRate =
                cue.startRate ?? cue.info?.format.sampleRate ?? item(for: cue.entry).flatMap(loadedSampleRate)
            return sampleRate.map { MediaTime(value: Int64(cue.startFrame), timescale: Int32($0)) } ?? .zero
        }
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
        return command {
            guard time.isNumeric, let rate = currentItem.flatMap(loadedSampleRate),
                case let frames = time.convertScale(Int32(rate)), frames.isNumeric
            else {
                completion?(false)
                return false
            }
            // Told `completion` itself, refused or not.
            guard restartCurrentItem(atFrame: Int(clamping: max(0, frames.value)), completion: completion) else {
                return false
            }
            if let item = currentItem {
                item.noteTime(time)
                post(.timeJumped(item))
            }
            return true
        }
    }

    /// Moves the current item to `time` (sample-exact) and returns once playback restarted there: `true`, or
    /// `false` when there is no current item or a later seek replaced this one.
    public func seek(to time: MediaTime) async -> Bool {
        await withCheckedContinuation { continuation in
            seek(to: time, queue: .global()) { continuation.resume(returning: $0) }
        }
    }

    // MARK: The picture observers see

    private var commandCount: Int { state.withLock { $0.commandCount } }

    /// Inside one of this player's observer calls, the picture it was made with; otherwise the player as it is.
    func currentView() -> ObserverCall.PlayerView {
        ObserverCall.view(of: self, commandCount: commandCount) ?? liveView()
    }

    /// The player as it is now; `entry`, when given, names the item the picture is of (a time's item).
    func liveView(entry: QueueEntry? = nil) -> ObserverCall.PlayerView {
        let engineState = engine.playerReading()
        let first = engineState.firstQueued
        let rate: Float = engineState.isPlaybackRequested ? 1 : 0
        return state.withLock { state in
            let current: PlayerItem?
            if let entry, let item = state.items[entry.id] {
                current = item
            } else if let held = Self.heldItem(in: state) {
                current = held
            } else {
                current = state.currentItem ?? first.flatMap { state.items[$0.id] }
            }
            var reason: WaitingReason?
            if rate != 0 {
                if let error = engineState.outputError {
                    reason = .outputUnavailable(error)
                } else if engineState.outputIsSuspended {
                    reason = .outputSuspended
                } else if current == nil, first == nil {
                    reason = .noItemToPlay
                }
            }
            return ObserverCall.PlayerView(
                player: ObjectIdentifier(self), commandCount: state.commandCount, currentItem: current,
                rate: rate, reasonForWaitingToPlay: reason)
        }
    }
}

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

    /// What plays again once heard (MediaPlayer's `MPRepeatType`; MPRIS's `LoopStatus`; MPD's `repeat` and `single`).
    public enum RepeatMode: Sendable, Equatable, CaseIterable {
        /// Nothing: each item leaves the queue once heard (the default).
        case off
        /// The current item, again and again; ``advanceToNextItem()`` moves on to the next, which then repeats.
        case one
        /// The whole queue: each item heard to its end, or skipped, is queued again at the end.
        case all
    }

    /// Whether the items play in a shuffled order (MediaPlayer's `MPShuffleType`; MPRIS's `Shuffle`; MPD's
    /// `random`).
    public enum ShuffleMode: Sendable, Equatable, CaseIterable {
        /// In the order they were queued (the default).
        case off
        /// In a random order: the items after the current one are shuffled, and those appended go to random places.
        case items
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
        /// A remote item has too little buffered to play without stalling: after ``QueuePlayer/play()`` (with
        /// ``QueuePlayer/automaticallyWaitsToMinimizeStalling``) or a stall. Playback starts once enough arrives.
        case toMinimizeStalls
    }

    /// AVFoundation's item notifications, delivered through ``notifications()``.
    public enum Notification: Sendable, Equatable {
        /// The item's last frame was heard.
        case didPlayToEndTime(PlayerItem)
        /// The item could not be opened or decoded to its end.
        case failedToPlayToEndTime(PlayerItem, DecoderError)
        /// The current item's time jumped (a seek).
        case timeJumped(PlayerItem)
        /// The item's metadata changed from the point now heard on: a stream's new title (ICY `StreamTitle`), told
        /// when the audio after it is heard, not when it arrived. ``PlayerItem/metadata`` says the same from now.
        case timedMetadata(PlayerItem, ItemMetadata)
        /// The item ran out of data while playing (a slow or interrupted server): nothing is heard, and the player
        /// waits (``QueuePlayer/reasonForWaitingToPlay`` `.toMinimizeStalls`) until enough has arrived, then plays
        /// on where it stood.
        case playbackStalled(PlayerItem)
    }

    /// Identifies a current-item observer; the same token type as every other observer's.
    public typealias CurrentItemObserverToken = ObserverToken

    let engine: PlaybackEngine
    let logger: Logger
    /// Who is told what: observers, streams and the background policy. The player's state itself is the engine's
    /// (`PlaybackEngine/State/player`).
    let registry = Mutex(Registry())
    /// Held while property observers are told, so that a picture taken earlier is never told after a later one.
    let tellingPropertyObservers = Mutex(())

    struct Registry {
        var nextObserverID = 1
        var currentItemObservers: [Int: (ObserverGate, @Sendable (PlayerItem?) -> Void)] = [:]
        var notificationObservers: [Int: (ObserverGate, @Sendable (Notification) -> Void)] = [:]
        var propertyObservers: [Int: PropertyObserver] = [:]
        var currentItemStreams: [Int: AsyncStream<PlayerItem?>.Continuation] = [:]
        var notificationStreams: [Int: AsyncStream<Notification>.Continuation] = [:]
        var eventStreams: [Int: AsyncStream<PlaybackEvent>.Continuation] = [:]
        var backgroundPolicy: BackgroundPlaybackPolicy?
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

    /// Creates a player that plays `items` into `sink`, paused until ``play()``; otherwise as the PulseAudio
    /// initializer. For a sink chosen at run time, or one of your own (see ``AudioSink``). The player owns the
    /// sink from now on: it starts, pauses and stops it, from its own threads.
    public init(
        items: [PlayerItem] = [], sink: any AudioSink, logger: Logger, application: Application = .shared
    ) {
        engine = PlaybackEngine(sink: sink, logger: logger)
        self.logger = logger
        engine.listen(changed: { [weak self] in self?.notifyPropertyObservers() }) { [weak self] event in
            self?.handle(event)
        }
        for item in items { insert(item, after: nil) }
        let policy = BackgroundPlaybackPolicy(player: self, application: application)
        registry.withLock { $0.backgroundPolicy = policy }
    }

    deinit {
        engine.shutdown()
    }

    /// Runs one of the player's transitions (State/EngineState+Player.swift) on the engine's state, under its lock,
    /// then carries out the actions it left, in order, and tells the current item's observers of a change of it. A
    /// command (`isCommand`) also makes observer pictures taken before it stale, and property observers hear what it
    /// changed.
    @discardableResult
    func transition<Result: Sendable>(
        isCommand: Bool = true, _ body: (inout PlaybackEngine.State, inout [PlaybackEngine.Action]) -> Result
    ) -> Result {
        let (result, actions, previous, current) = engine.state.withLock { state in
            if isCommand { state.player.commandCount += 1 }
            let previous = state.player.currentItem
            var actions: [PlaybackEngine.Action] = []
            let result = body(&state, &actions)
            return (result, actions, previous, state.player.currentItem)
        }
        engine.carryOut(actions)
        if previous !== current { tellCurrentItemChange(from: previous, to: current) }
        if isCommand { notifyPropertyObservers() }
        return result
    }

    /// Counts a command that changes nothing (a refused seek): as after any command, observer pictures taken before
    /// it are stale, and property observers look again.
    func countRefusedCommand() {
        transition { _, _ in }
    }

    /// Reads the engine's state, the player's part with it, in one lock acquisition.
    func read<Result: Sendable>(_ body: (PlaybackEngine.State) -> Result) -> Result {
        engine.state.withLock { body($0) }
    }

    // MARK: The queue

    /// True while playback is wanted: rate 1, also while the output is away. Part of ``BackgroundPausable``.
    public var isPlaybackRequested: Bool { engine.isPlaybackRequested }

    /// The queued items, the current one first (also when it is held at its end).
    public func items() -> [PlayerItem] {
        read(\.playerItems)
    }

    /// True when `item` is not queued already and `after` (nil: the end) is queued.
    public func canInsert(_ item: PlayerItem, after: PlayerItem?) -> Bool {
        read { $0.canInsert(item, after: after) }
    }

    /// Queues `item` after `after` (nil: at the end). Does nothing when ``canInsert(_:after:)`` is false.
    public func insert(_ item: PlayerItem, after: PlayerItem?) {
        let audible = engine.audibleFrame()
        transition { state, actions in state.insertItem(item, after: after, audibleFrame: audible, into: &actions) }
    }

    /// Removes `item` from the queue; removing the current item plays the next one.
    public func remove(_ item: PlayerItem) {
        let audible = engine.audibleFrame()
        transition { state, actions in state.removeItem(item, audibleFrame: audible, into: &actions) }
    }

    /// Empties the queue; the current item becomes nil at once (its observers are told now).
    public func removeAllItems() {
        transition { state, actions in state.removeAllItems(into: &actions) }
    }

    /// Ends the current item and plays the next one. The item left goes into the ``history()``. An item held at its
    /// end (``actionAtItemEnd`` `.pause` or `.none`) has ended already and is in the history: the next one is made
    /// current at its start, at the rate the player has (paused, after `.pause`), and after the last one nothing is.
    /// Any thread.
    public func advanceToNextItem() {
        let audible = engine.audibleFrame()
        transition { state, actions in state.advancePlayer(audibleFrame: audible, into: &actions) }
    }

    // MARK: Playback

    /// Sets the rate to 1.
    public func play() {
        // Reported before playback starts, so the time is where it starts.
        engine.reportCurrentTime()
        transition { state, actions in state.playPlayer(into: &actions) }
    }

    /// Prepares the first play, as AVPlayer's `preroll(atRate:)` does: the current item and the output open,
    /// paused, and decoding runs ahead, so that ``play()`` is heard at once. The rate stays 0 and nothing is heard.
    /// Does nothing once playing has started. Any thread.
    public func preroll() {
        transition { state, actions in actions += state.preroll() }
    }

    /// Sets the rate to 0.
    public func pause() {
        transition { state, actions in state.pausePlayer(into: &actions) }
        currentItem?.noteTime(currentTime())
    }

    /// Whether playback paused for entering the background resumes on return to the foreground (off by default,
    /// as on iOS).
    public var resumesAfterBackground: Bool {
        get { registry.withLock { $0.backgroundPolicy?.resumesOnForeground ?? false } }
        set { registry.withLock { $0.backgroundPolicy?.resumesOnForeground = newValue } }
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

    /// Whether ``play()`` waits, with nothing heard, until a remote item has its
    /// ``PlayerItem/preferredForwardBufferDuration`` buffered (on by default, as in AVFoundation): meanwhile
    /// ``timeControlStatus`` is `.waitingToPlayAtSpecifiedRate` and ``reasonForWaitingToPlay`` `.toMinimizeStalls`.
    /// Off, playing starts at once and, after a stall, goes on as soon as data arrives again. Either way a stall is
    /// reported as waiting, never as playing. Any thread.
    public var automaticallyWaitsToMinimizeStalling: Bool {
        get { engine.waitsToMinimizeStalls }
        set {
            engine.waitsToMinimizeStalls = newValue
            notifyPropertyObservers()
        }
    }

    /// What happens when the current item ends; `.advance` by default. Any thread.
    public var actionAtItemEnd: ActionAtItemEnd {
        get { read(\.player.actionAtItemEnd) }
        set { transition { state, actions in state.setActionAtItemEnd(newValue, into: &actions) } }
    }

    /// What plays again; `.off` by default. An item repeats as a new item for the same location (as AVPlayerLooper
    /// queues copies), queued as soon as the item has been decoded to its end so that the sound goes on without a
    /// gap: until the item has been heard to its end, ``items()`` lists both. An item that fails, or is removed, does
    /// not repeat. Setting another mode takes out the repetitions not yet begun and queues those of the new one.
    /// Any thread.
    public var repeatMode: RepeatMode {
        get { read(\.player.repeatMode) }
        set {
            let audible = engine.audibleFrame()
            transition { state, actions in state.setRepeatMode(newValue, audibleFrame: audible, into: &actions) }
        }
    }

    /// Whether the queue plays shuffled; `.off` by default. The queue is the play order, so ``items()`` lists the
    /// shuffled order, which ``advanceToNextItem()`` follows: turning it on shuffles the items after the current one
    /// (the current one plays on), those with a priority first (``setPriority(_:of:)``); while it is on, items
    /// inserted at the end (`after: nil`) go to random places among those without a priority, and those inserted
    /// after a given item go there; turning it off puts the items back in the order they had, those added meanwhile
    /// after them. Any thread.
    public var shuffleMode: ShuffleMode {
        get { read(\.player.shuffleMode) }
        set {
            let audible = engine.audibleFrame()
            transition { state, actions in state.setShuffleMode(newValue, audibleFrame: audible, into: &actions) }
        }
    }

    /// Which ReplayGain correction items play with (``ReplayGainMode``); `.off` by default. A change, also the
    /// shuffle mode's under `.auto`, applies to the frames decoded from then on: the current item's too, heard after
    /// the decoded-ahead ring (under a second) and the output's latency. Any thread.
    public var replayGainMode: ReplayGainMode {
        get { read(\.player.replayGainMode) }
        set { transition { state, _ in state.player.replayGainMode = newValue } }
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
        let audible = engine.audibleFrame()
        switch read({ $0.playerTime(audibleFrame: audible) }) {
        case .known(let time):
            return time
        case .cued(let item, let frame):
            // Cued in an item not opened yet: its rate is read from its file.
            let rate = item.flatMap(loadedSampleRate)
            return rate.map { MediaTime(value: Int64(frame), timescale: Int32($0)) } ?? .zero
        }
    }

    /// Moves the current item to `time`. With zero tolerances (the default) the position is sample-exact; wider
    /// tolerances are accepted and the seek is exact all the same. Returns false when there is no current item, or
    /// when it cannot be sought in (``PlayerItem/seekableTimeRanges`` empty once ready: a live stream, or a remote
    /// file whose server does not serve ranges; the logger is told which).
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
        // The rate is read first (from the file, for an item not opened yet); the seek applies only if its item is
        // still current when it is carried out.
        let item = liveView().currentItem
        if let item, item.refusesSeeks {
            let reason = item.isLive ? "it is a live stream" : "its server does not serve ranges"
            logger.error("cannot seek in \(item.location): \(reason)")
        }
        guard time.isNumeric, let item, !item.refusesSeeks, let rate = loadedSampleRate(item),
            case let frames = time.convertScale(Int32(rate)), frames.isNumeric
        else {
            countRefusedCommand()
            completion?(false)
            return false
        }
        let accepted = transition { state, actions in
            guard state.shownCurrentItem === item else {
                actions.append(.failSeeks(completion.map { [$0] } ?? []))
                return false
            }
            let frame = Int(clamping: max(0, frames.value))
            return state.restartCurrentItem(atFrame: frame, completion: completion, into: &actions)
        }
        guard accepted else { return false }
        item.noteTime(time)
        post(.timeJumped(item))
        return true
    }

    /// Moves the current item to `time` (sample-exact) and returns once playback restarted there: `true`, or
    /// `false` when there is no current item or a later seek replaced this one.
    public func seek(to time: MediaTime) async -> Bool {
        await withCheckedContinuation { continuation in
            seek(to: time, queue: .global()) { continuation.resume(returning: $0) }
        }
    }

    // MARK: The picture observers see

    private var commandCount: Int { read(\.player.commandCount) }

    /// Inside one of this player's observer calls, the picture it was made with; otherwise the player as it is.
    func currentView() -> ObserverCall.PlayerView {
        ObserverCall.view(of: self, commandCount: commandCount) ?? liveView()
    }

    /// The player as it is now, from one reading of the engine's state.
    func liveView() -> ObserverCall.PlayerView {
        read { state in view(in: state, currentItem: state.shownCurrentItem) }
    }

    /// The player as it is now with `entry`'s item current, for a time of that item; nil once the item has left
    /// the player (removed or skipped while its last frames still sound): its times are no one's current time.
    func liveView(entry: QueueEntry) -> ObserverCall.PlayerView? {
        read { state in state.player.items[entry.id].map { view(in: state, currentItem: $0) } }
    }

    /// The player's picture in `state`, with `current` as its current item.
    private func view(
        in state: PlaybackEngine.State, currentItem current: PlayerItem?
    )
        -> ObserverCall.PlayerView
    {
        let rate: Float = state.isPlaybackRequested ? 1 : 0
        var reason: WaitingReason?
        if rate != 0 {
            if let error = state.outputError {
                reason = .outputUnavailable(error)
            } else if state.outputIsSuspended {
                reason = .outputSuspended
            } else if current == nil, state.firstInOrder == nil {
                reason = .noItemToPlay
            } else if state.phase == .buffering {
                reason = .toMinimizeStalls
            }
        }
        return ObserverCall.PlayerView(
            player: ObjectIdentifier(self), commandCount: state.player.commandCount, currentItem: current, rate: rate,
            reasonForWaitingToPlay: reason, isStopped: state.player.isStopped)
    }
}

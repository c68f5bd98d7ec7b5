import Dispatch
import FoundationEssentials
import Logging
import Synchronization

/// Plays a queue of items, back to back in one stream, through an ``AudioSink``.
///
/// Items of the same format join with no gap and no overlap: the next item is decoded into the same ring while the
/// current one is still playing. When the format changes (sample rate), the stream is drained and reopened at the
/// boundary, so nothing is resampled and nothing clicks. An item that cannot be opened or decoded fails alone
/// (``PlaybackEvent/itemFailed(_:_:)``) and the queue goes on.
///
/// Threads: every public method may be called from any thread or task. The engine runs two threads of its own:
/// a decoding thread (file I/O and libmpg123) and an event thread (maps the audible position to events, drains
/// the output). Events are delivered through ``events``; none is produced on the audio callback path.
public final class PlaybackEngine: BackgroundPausable, Sendable {
    /// Creates a decoder for a file. Called on the decoding thread.
    public typealias DecoderFactory = @Sendable (URL, Logger) throws(DecoderError) -> any AudioDecoder

    /// A snapshot of what is playing, for status displays. Computed on demand; safe from any thread.
    public struct Status: Sendable, Equatable {
        /// The item being heard, if any.
        public var current: ItemInfo?
        /// Frames of the current item heard so far.
        public var elapsedFrames: Int
        /// True between ``play()`` and ``pause()``.
        public var isPlaying: Bool

        /// Seconds of the current item heard so far.
        public var elapsed: Double { current.map { $0.format.seconds(forFrames: elapsedFrames) } ?? 0 }
    }

    /// The events, in the order they are heard. Meant for one consumer; finishes after ``shutdown()``.
    public let events: AsyncStream<PlaybackEvent>

    let sink: any AudioSink
    let renderer: Renderer
    let logger: Logger
    let makeDecoder: DecoderFactory
    let state = Mutex<State>(State())
    let eventContinuation: AsyncStream<PlaybackEvent>.Continuation
    /// Every ring frame before this one has been heard (a drain confirmed it) or never will be (it was discarded).
    let heardThroughFrame = Atomic<Int>(0)
    /// Wakes the decoding thread: items were queued, or the engine is shutting down.
    let decoderWake = DispatchSemaphore(value: 0)
    /// Told each event before ``events`` is, on the thread that posts it, and before any observer time heard after
    /// it is dispatched: a ``QueuePlayer`` keeps its state in step with what is heard this way.
    let eventListener = Mutex<(@Sendable (PlaybackEvent) -> Void)?>(nil)

    struct State {
        var nextEntryID = 1
        var pending: [QueueEntry] = []
        var timeline = PlaybackTimeline()
        var isPlaying = false
        var threadsStarted = false
        var isShuttingDown = false
        var decoderIsIdle = false
        var queueFinishedReported = false
        var outputError: AudioSinkError?
        /// A skip or seek for the decoding thread to carry out; `pending` already holds the new play order.
        var restart: Restart?
        /// When set, the decoding thread stops at the end of each item until released (actionAtItemEnd
        /// `.pause` or `.none`).
        var holdsAtItemEnd = false
        var volume: Float = 1
        var isMuted = false
        /// The decoding thread is waiting at an item's end.
        var isHoldingAtItemEnd = false
        /// Set to let a holding decoding thread go on to the next entry.
        var holdReleased = false
        var nextObserverID = 1
        /// Time observers, and for each the item and the index of the next time it reports.
        var timeObservers: [Int: ObserverProgress] = [:]

        /// The play order: while a restart waits, `pending` alone (the timeline still shows what it will drop);
        /// otherwise the entries decoded, the playing one first, then `pending`.
        var order: [QueueEntry] {
            restart != nil ? pending : timeline.entries + (opening.map { [$0] } ?? []) + pending
        }

        /// Replaces the waiting restart (if any) with `new`; returns the replaced one's seek completions, to be told
        /// `false` once the lock is released.
        mutating func replaceRestart(with new: Restart) -> [@Sendable (Bool) -> Void] {
            defer { restart = new }
            return restart?.completions ?? []
        }

        /// The entry the decoding thread has taken and is opening: in neither the timeline nor `pending` yet.
        var opening: QueueEntry?

        /// Makes every observer start over with the next item heard (after a skip or seek).
        mutating func resetObserverProgress() {
            for id in timeObservers.keys { timeObservers[id]?.entryID = nil }
        }
    }

    /// How far one time observer has been told.
    struct ObserverProgress {
        let observer: TimeObserver
        /// The entry the times count in; nil before the first item or after a skip or seek.
        var entryID: Int?
        /// The index of the next time to report (the multiple, or the boundary).
        var nextIndex: Int64 = 0
    }

    /// Where playback starts again after a skip or a seek.
    struct Restart {
        /// The frame of the first pending entry to start at.
        var startFrame: Int
        /// The entry being resumed (a seek, or an edit of what follows it): it posts no second
        /// ``PlaybackEvent/itemStarted(_:)``.
        var resumes: QueueEntry?
        /// True for a queue edit, which is no jump in time: time observers go on where they were.
        var keepsObservers = false
        /// Told `true` once playback has been set up again from the new position, or `false` if another skip,
        /// seek or edit replaced this one first.
        var completions: [@Sendable (Bool) -> Void] = []
    }

    /// Creates an engine that plays through `sink`. `bufferFrames` sizes the decode-ahead ring (at 44.1 kHz, the
    /// default holds about 0.75 s). `logger` receives warnings about items and the output.
    public init(
        sink: any AudioSink, logger: Logger, bufferFrames: Int = 32_768,
        makeDecoder: @escaping DecoderFactory = { url, logger throws(DecoderError) in
            try MPG123Decoder(url: url, logger: logger)
        }
    ) {
        self.sink = sink
        self.logger = logger
        self.makeDecoder = makeDecoder
        renderer = Renderer(bufferFrames: bufferFrames)
        (events, eventContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        sink.setFailureHandler { [weak self] error in self?.outputFailed(error) }
    }

    /// Appends files to the queue and returns their entries. Files are opened only when their turn to be decoded
    /// comes; a bad one is reported then, as an event, and skipped.
    @discardableResult
    public func enqueue(_ urls: [URL]) -> [QueueEntry] {
        let entries = state.withLock { state -> [QueueEntry] in
            let entries = urls.map { url in
                defer { state.nextEntryID += 1 }
                return QueueEntry(id: state.nextEntryID, url: url)
            }
            state.pending.append(contentsOf: entries)
            state.queueFinishedReported = false
            return entries
        }
        decoderWake.signal()
        return entries
    }

    /// Appends entries that keep the ids they had (restoring a saved queue); later entries get ids above them.
    /// Any thread.
    public func enqueue(restoring entries: [QueueEntry]) {
        state.withLock { state in
            state.pending.append(contentsOf: entries)
            state.nextEntryID = max(state.nextEntryID, (entries.map(\.id).max() ?? 0) + 1)
            state.queueFinishedReported = false
        }
        decoderWake.signal()
    }

    /// Makes the first queued entry start at `frame` when playback starts, announced as a new start (an
    /// ``PlaybackEvent/itemStarted(_:)``, unlike a seek's): for restoring a saved position before the first
    /// ``play()``. Any thread.
    public func cue(startFrame frame: Int) {
        let replaced = state.withLock { state in
            state.pending = state.order
            return state.replaceRestart(with: Restart(startFrame: max(0, frame), resumes: nil))
        }
        replaced.forEach { $0(false) }
        wakeDecoder()
    }

    /// Calls `block` on `queue` with the current item's time (`MediaTime` in the item's sample rate) at every multiple
    /// of `interval` as playback passes it (0, interval, 2 × interval, … counted from each item's start), once the
    /// frame at that time has been heard; and also once with the exact time when playback starts or pauses, and
    /// once at the new time after a seek; two calls in a row never report the same time. With an unpaced
    /// ``NullSink`` the calls come as fast as decoding, in the same order. `interval` must be positive and
    /// numeric. Any thread; the block never runs on the audio path.
    public func addPeriodicTimeObserver(
        forInterval interval: MediaTime, queue: DispatchQueue = .main,
        using block: @escaping @Sendable (MediaTime) -> Void
    ) -> TimeObserverToken {
        addPeriodicTimeObserver(forInterval: interval, queue: queue, snapshot: nil, using: block)
    }

    /// As the public method, with `snapshot` taking the picture each call is made with.
    func addPeriodicTimeObserver(
        forInterval interval: MediaTime, queue: DispatchQueue, snapshot: TimeObserver.Snapshot?,
        using block: @escaping @Sendable (MediaTime) -> Void
    ) -> TimeObserverToken {
        precondition(interval.isNumeric && interval > .zero, "a periodic time observer needs a positive interval")
        return addTimeObserver(TimeObserver(schedule: .periodic(interval), queue: queue, snapshot: snapshot, block: block))
    }

    /// Calls `block` on `queue` each time playback crosses one of `times` in an item's timeline (once per item, as
    /// the frame at that time is heard). Times a seek jumps over are not reported; start, stop and seek are not
    /// reported either. Non-numeric times are ignored. Any thread; the block never runs on the audio path.
    public func addBoundaryTimeObserver(
        forTimes times: [MediaTime], queue: DispatchQueue = .main, using block: @escaping @Sendable () -> Void
    ) -> TimeObserverToken {
        addBoundaryTimeObserver(forTimes: times, queue: queue, snapshot: nil, using: block)
    }

    /// As the public method, with `snapshot` taking the picture each call is made with.
    func addBoundaryTimeObserver(
        forTimes times: [MediaTime], queue: DispatchQueue, snapshot: TimeObserver.Snapshot?,
        using block: @escaping @Sendable () -> Void
    ) -> TimeObserverToken {
        let boundaries = Array(Set(times.filter(\.isNumeric))).sorted()
        return addTimeObserver(
            TimeObserver(schedule: .boundaries(boundaries), queue: queue, snapshot: snapshot) { _ in block() })
    }

    func addTimeObserver(_ observer: TimeObserver) -> TimeObserverToken {
        let audible = audibleFrame()
        let token = state.withLock { state in
            defer { state.nextObserverID += 1 }
            var progress = ObserverProgress(observer: observer)
            state.startObserver(&progress, audibleFrame: audible)
            state.timeObservers[state.nextObserverID] = progress
            return TimeObserverToken(id: state.nextObserverID, kind: .time)
        }
        renderer.wakeProgressWaiter()
        return token
    }

    /// Removes a time observer. Once this returns, no new call of its block starts (a call already running on
    /// another thread is waited for, unless this is called from inside an observer call). Any thread.
    public func removeTimeObserver(_ token: TimeObserverToken) {
        let removed = state.withLock { $0.timeObservers.removeValue(forKey: token.id) }
        removed?.observer.deactivate()
    }

    /// Tells every periodic observer the current time (at start and stop), if an item is being heard.
    private func reportCurrentTime() {
        let status = status()
        guard let item = status.current else { return }
        let time = MediaTime(value: Int64(status.elapsedFrames), timescale: Int32(item.format.sampleRate))
        let observers = state.withLock { $0.timeObservers.values.map(\.observer).filter(\.isPeriodic) }
        observers.forEach { $0.deliver(time, in: item.entry) }
    }

    /// Starts or resumes playback. The first call starts the engine's threads.
    public func play() {
        // Reported before playback starts, so the time is where it starts (and, on the first play, nothing is
        // reported: the observers' 0 follows when the first frame is heard).
        reportCurrentTime()
        let startThreads = state.withLock { state -> Bool in
            guard !state.isShuttingDown else { return false }
            state.isPlaying = true
            defer { state.threadsStarted = true }
            return !state.threadsStarted
        }
        if startThreads {
            PosixThread.start(name: "QP decode") { [self] in runDecoding() }
            PosixThread.start(name: "QP events") { [self] in runEvents() }
        } else {
            sink.setPaused(false)
        }
    }

    /// True between ``play()`` and ``pause()``. Part of ``BackgroundPausable``.
    public var isPlaybackRequested: Bool { state.withLock { $0.isPlaying } }

    /// Pauses playback; the sink keeps what it holds, so ``play()`` resumes at the same frame.
    public func pause() {
        state.withLock { $0.isPlaying = false }
        sink.setPaused(true)
        reportCurrentTime()
    }

    /// Stops the item being heard, drops what was decoded ahead of it and flushes the output, then plays on from
    /// the next entry. No ``PlaybackEvent/itemFinished(_:)`` is posted for the item left. Does nothing when nothing
    /// is queued. Any thread; takes effect within one decoding chunk.
    public func advanceToNextItem() {
        let replaced = state.withLock { state -> [@Sendable (Bool) -> Void] in
            if state.isHoldingAtItemEnd, state.restart == nil, state.timeline.isEmpty {
                // The item held at its end has been heard to its end: going on is moving to the next entry.
                state.holdReleased = true
                return []
            }
            let order = state.order
            guard !order.isEmpty else { return [] }
            state.pending = Array(order.dropFirst())
            state.queueFinishedReported = false
            return state.replaceRestart(with: Restart(startFrame: 0, resumes: nil))
        }
        replaced.forEach { $0(false) }
        wakeDecoder()
    }

    /// The playback volume, 0 (silent) to 1 (as decoded, the default); values above 1 amplify and may clip.
    /// Applies to frames rendered from now on (through PulseAudio, heard after the server's buffer, at most
    /// ``PulseAudioSink/targetLatencyMilliseconds``). Any thread.
    public var volume: Float {
        get { state.withLock { $0.volume } }
        set {
            let gain = state.withLock { state -> Float in
                state.volume = max(0, newValue)
                return state.isMuted ? 0 : state.volume
            }
            renderer.gain = gain
        }
    }

    /// Silences playback without changing ``volume``. Any thread.
    public var isMuted: Bool {
        get { state.withLock { $0.isMuted } }
        set {
            let gain = state.withLock { state -> Float in
                state.isMuted = newValue
                return state.isMuted ? 0 : state.volume
            }
            renderer.gain = gain
        }
    }

    /// When true, playback stops at the end of each item, with nothing of the next one decoded or heard, until
    /// ``advanceToNextItem()`` (or an edit or seek) moves on; after the last item the queue simply ends. When false
    /// (the default), items follow each other with no gap. Turning it off releases a hold. Any thread.
    public var holdsAtItemEnd: Bool {
        get { state.withLock { $0.holdsAtItemEnd } }
        set {
            state.withLock { state in
                state.holdsAtItemEnd = newValue
                if !newValue { state.holdReleased = true }
            }
            wakeDecoder()
        }
    }

    /// Plays the first entry of ``queue()`` (the item being heard, or the one about to be) from `frame` (0-based,
    /// sample-exact; past the end, the item ends at once), dropping what was decoded ahead and flushing the output.
    /// Returns false when the queue is empty. `completion` (on the decoding thread; keep it short) is told `true` once decoding
    /// has restarted at `frame`, or `false` if another skip, seek or edit replaced this one first. Any thread.
    @discardableResult
    public func seek(toFrame frame: Int, completion: (@Sendable (Bool) -> Void)? = nil) -> Bool {
        let (accepted, superseded) = state.withLock { state -> (Bool, [@Sendable (Bool) -> Void]) in
            let order = state.order
            guard let playing = order.first else { return (false, []) }
            state.pending = order
            let superseded = state.replaceRestart(
                with: Restart(startFrame: max(0, frame), resumes: playing, completions: completion.map { [$0] } ?? []))
            state.queueFinishedReported = false
            return (true, superseded)
        }
        superseded.forEach { $0(false) }
        if accepted { wakeDecoder() } else { completion?(false) }
        return accepted
    }

    /// Wakes the decoding thread wherever it waits: idle, or for space in the ring.
    func wakeDecoder() {
        decoderWake.signal()
        renderer.wakeProducer()
    }

    /// What is being heard now.
    public func status() -> Status {
        let audible = audibleFrame()
        return state.withLock { state in
            let current = state.timeline.current
            let elapsed = current.map { min(max(0, audible - $0.startFrame), $0.info?.frameCount ?? 0) } ?? 0
            return Status(current: current?.info, elapsedFrames: elapsed, isPlaying: state.isPlaying)
        }
    }

    /// Where playback will start when nothing is being heard (paused before the first play, cued, between items,
    /// held at an item's end), or as soon as a skip, seek or cue is carried out (``status()`` still shows what was
    /// heard until then). Nil while an item is heard with nothing waiting, and when the queue is empty.
    public struct Cue: Sendable, Equatable {
        /// The entry that plays first.
        public var entry: QueueEntry
        /// Its details, once the decoding thread has opened it; nil before (read them with the decoder if needed).
        public var info: ItemInfo?
        /// The frame of the item playback starts at.
        public var startFrame: Int
    }

    /// The entry that plays next, and from where: see ``Cue``. Any thread; never waits.
    public func cue() -> Cue? {
        state.withLock { state in
            if let restart = state.restart {
                guard let entry = state.pending.first else { return nil }
                // A seek in the item being heard: its details are known already.
                let info = state.timeline.current?.info.flatMap { $0.entry == entry ? $0 : nil }
                return Cue(entry: entry, info: info, startFrame: restart.startFrame)
            }
            guard state.timeline.current == nil else { return nil }
            if let segment = state.timeline.playing {
                return Cue(entry: segment.entry, info: segment.info, startFrame: segment.resumeFrame)
            }
            return state.order.first.map { Cue(entry: $0, info: nil, startFrame: 0) }
        }
    }

    /// Stops playback and the engine's threads, closes the output, and finishes ``events``. Safe to call twice.
    public func shutdown() {
        let (wasRunning, unfinished) = state.withLock { state -> (Bool, [@Sendable (Bool) -> Void]) in
            defer {
                state.isShuttingDown = true
                state.restart?.completions = []
            }
            return (!state.isShuttingDown, state.restart?.completions ?? [])
        }
        unfinished.forEach { $0(false) }
        guard wasRunning else { return }
        decoderWake.signal()
        renderer.wakeProgressWaiter()
        sink.stop()
        eventContinuation.finish()
    }

    /// The ring frame being heard now: estimated from the sink's latency, and never less than what a drain
    /// confirmed.
    func audibleFrame() -> Int {
        return max(consistentAudibleFrame(), heardThroughFrame.load(ordering: .acquiring))
    }

    /// The render position and the sink's latency as of the same instant: a render that hands over frames between
    /// the two reads would shift the latency by a whole write (tens of milliseconds), so such a pair is read again.
    private func consistentAudibleFrame() -> Int {
        while true {
            let before = renderer.position.read()
            let latency = sink.latencyFrames()
            if renderer.position.read() == before {
                return before.audibleRingFrame(latencyFrames: latency)
            }
        }
    }

    /// Waits until the sink has played everything handed to it, then records that as heard. On failure, posts
    /// ``PlaybackEvent/outputFailed(_:)`` and returns false. Any engine thread.
    func drainOutput() -> Bool {
        let handedOver = renderer.position.read().ringFrames
        do {
            try sink.drain()
        } catch {
            outputFailed(error)
            return false
        }
        heardThroughFrame.max(handedOver, ordering: .acquiringAndReleasing)
        return true
    }

    /// Sends every event to `listener` instead of ``events``, which finishes at once (nobody reads it, so nothing
    /// may pile up in it). For the player built on this engine; call before the first play.
    func listen(_ listener: @escaping @Sendable (PlaybackEvent) -> Void) {
        eventListener.withLock { $0 = listener }
        eventContinuation.finish()
    }

    func post(_ event: PlaybackEvent) {
        eventListener.withLock { $0 }?(event)
        eventContinuation.yield(event)
    }

    var isShuttingDown: Bool { state.withLock { $0.isShuttingDown || $0.outputError != nil } }

    func outputFailed(_ error: AudioSinkError) {
        let first = state.withLock { state -> Bool in
            defer { state.outputError = state.outputError ?? error }
            return state.outputError == nil
        }
        guard first else { return }
        post(.outputFailed(error))
        decoderWake.signal()
        renderer.wakeProgressWaiter()
    }
}

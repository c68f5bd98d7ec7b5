import Dispatch
import FoundationEssentials
import Logging
import PosixThreads
import Synchronization

/// Plays a queue of items, back to back in one stream, through an `AudioSink`.
///
/// Items join with no gap and no overlap: the next item is decoded into the same ring while the current one is still
/// playing. On a sink that plays one rate (`AudioSink/outputSampleRate`) items at other rates are resampled to it
/// (`ResampledDecoder`); on a sink that takes each item's rate, the stream is drained and reopened at a change of
/// rate. An item that cannot be opened or decoded fails alone
/// (``PlaybackEvent/itemFailed(_:_:)``) and the queue goes on.
///
/// Threads: every public method may be called from any thread or task. The engine runs two threads of its own:
/// a decoding thread (file I/O and libmpg123) and an event thread (maps the audible position to events, drains
/// the output). Events are delivered through ``events``; none is produced on the audio callback path.
package final class PlaybackEngine: BackgroundPausable, Sendable {
    /// Creates a decoder for an item. Called on the decoding thread, or on a thread reading an item's details.
    package typealias DecoderFactory = @Sendable (URL, DecoderContext) throws(DecoderError) -> any AudioDecoder

    /// What is playing, for status displays. Computed on demand; safe from any thread.
    package struct Status: Sendable, Equatable {
        /// The item being heard, if any.
        package var current: OpenedEntry?
        /// Frames of the current item heard so far.
        package var elapsedFrames: Int
        /// True between ``play()`` and ``pause()``.
        package var isPlaying: Bool

        /// Seconds of the current item heard so far.
        package var elapsed: Double { current.map { $0.format.seconds(forFrames: elapsedFrames) } ?? 0 }
    }

    /// The events, in the order they are heard. Meant for one consumer; finishes after ``shutdown()``.
    package let events: AsyncStream<PlaybackEvent>

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
    /// Signalled by the decoding thread each time it has carried out a restart (see
    /// ``waitUntilRestartsAreCarriedOut(until:)``).
    let restartCarriedOut = DispatchSemaphore(value: 0)
    /// Cuts short the wait between two attempts to reconnect the output: the engine is shutting down.
    let reconnectWake = DispatchSemaphore(value: 0)
    /// While the output is lost, the ring frame heard when it went away (what ``audibleFrame()`` reports); -1
    /// otherwise.
    let frameHeardAtLoss = Atomic<Int>(-1)
    /// How the last flush that an item continues past was counted (``FlushAccount``); nil before the first.
    package let lastFlushAccount = Mutex<FlushAccount?>(nil)
    /// The event thread waits for the sink's next timing report (its estimate of what is heard stands still).
    let timingReportAwaited = Atomic<Bool>(false)
    /// Held while the gain is read from the state and handed to the renderer and the sink (``applyGain()``).
    private let gainHandOff = Mutex(())
    /// Told each event before ``events`` is, on the thread that posts it, and before any observer time heard after
    /// it is dispatched: a ``QueuePlayer`` keeps its state in step with what is heard this way.
    let eventListener = Mutex<EventListener?>(nil)

    /// The listener's closure, in a struct of its own. A `Mutex` whose value is a bare closure (or an optional one)
    /// wraps it in two more reabstraction thunks at every `withLock`, since its inout value is converted to the
    /// generic representation and back: after a few thousand events each post ran through thousands of nested thunks
    /// (quadratic cost in a release build; a stack overflow in a debug build, found by the soak). A struct's
    /// representation does not change, so nothing accumulates.
    struct EventListener: Sendable {
        let hear: @Sendable (PlaybackEvent) -> Void
        /// Told when something its property observers read changed without an event (an item's connection).
        let changed: @Sendable () -> Void
    }

    /// Creates an engine that plays through `sink`. `bufferFrames` sizes the decode-ahead ring (nil: what the sink
    /// asks for, `AudioSink/decodeAheadFrames`). `logger` receives warnings about items and the output.
    package init(
        sink: any AudioSink, logger: Logger, bufferFrames: Int? = nil,
        makeDecoder: @escaping DecoderFactory = { url, context throws(DecoderError) in
            try MPG123Decoder(url: url, context: context)
        }
    ) {
        self.sink = sink
        self.logger = logger
        self.makeDecoder = makeDecoder
        renderer = Renderer(bufferFrames: bufferFrames ?? sink.decodeAheadFrames)
        (events, eventContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        sink.setFailureHandler { [weak self] error in self?.outputFailed(error) }
        sink.setSuspensionHandler { [weak self] suspended in
            guard let self else { return }
            state.withLock { $0.outputSuspensionChanged(suspended) }
            renderer.wakeProgressWaiter()
        }
        sink.setTimingHandler { [weak self] in self?.timingReported() }
    }

    /// Opens `url` as it will play: through a `ResampledDecoder` when the sink plays one rate
    /// (`AudioSink/outputSampleRate`) and the item has another, so that its frames, length and positions count at
    /// the sink's rate. Throws the ``DecoderError`` that names the file. The decoding thread (whose waits for a
    /// remote item's bytes end when a skip, seek, edit or shutdown needs it), or a caller reading an item's details
    /// (`context` nil: its waits end only when the server answers or the download gives up).
    func openDecoder(_ url: URL, context: DecoderContext? = nil) throws(DecoderError) -> any AudioDecoder {
        let decoder = try makeDecoder(url, context ?? DecoderContext(logger: logger))
        guard let rate = sink.outputSampleRate, rate != decoder.format.sampleRate else { return decoder }
        return try ResampledDecoder(decoder, outputRate: rate)
    }

    /// A decoder for `entry`'s item, as ``openDecoder(_:context:)`` opens one, presenting the part of it that the
    /// entry's playback range names (a live stream plays whole). Any thread.
    func openDecoder(for entry: QueueEntry, context: DecoderContext? = nil) throws(DecoderError) -> any AudioDecoder {
        let decoder = try openDecoder(entry.url, context: context)
        guard !decoder.isLive, let range = state.withLock({ $0.player.playbackRanges[entry.id] }) else {
            return decoder
        }
        return try ClippedDecoder(decoder, range: range)
    }

    /// Appends files to the queue and returns their entries. Files are opened only when their turn to be decoded
    /// comes; a bad one is reported then, as an event, and skipped.
    @discardableResult
    package func enqueue(_ urls: [URL]) -> [QueueEntry] {
        let (entries, actions) = state.withLock { $0.enqueue(urls.map(\.itemLocation)) }
        carryOut(actions)
        return entries
    }

    /// Appends entries that keep the ids they had (restoring a saved queue); later entries get ids above them.
    /// Any thread.
    package func enqueue(restoring entries: [QueueEntry]) {
        carryOut(state.withLock { $0.enqueue(restoring: entries) })
    }

    /// Makes the first queued entry start at `frame` when playback starts, announced as a new start (an
    /// ``PlaybackEvent/itemStarted(_:)``, unlike a seek's): for restoring a saved position before the first
    /// ``play()``. `frame` counts at `rate` (a position saved when the output may have had another rate), or, when
    /// that is nil, at the rate the item plays at. Any thread.
    package func cue(startFrame frame: Int, countedAt rate: Int? = nil) {
        carryOut(state.withLock { $0.cue(startFrame: frame, countedAt: rate) })
    }

    /// Calls `block` on `queue` with the current item's time (`MediaTime` in the item's sample rate) at every multiple
    /// of `interval` as playback passes it (0, interval, 2 × interval, … counted from each item's start), once the
    /// frame at that time has been heard; and also once with the exact time when playback starts or pauses, and
    /// once at the new time after a seek; two calls in a row never report the same time. With an unpaced
    /// ``NullSink`` the calls come as fast as decoding, in the same order. `interval` must be positive and
    /// numeric. Any thread; the block never runs on the audio path.
    package func addPeriodicTimeObserver(
        forInterval interval: MediaTime, queue: DispatchQueue = .main,
        using block: @escaping @Sendable (MediaTime) -> Void
    ) -> TimeObserverToken {
        addPeriodicTimeObserver(forInterval: interval, queue: queue, picture: nil, using: block)
    }

    /// As the public method, with `picture` taking the picture each call is made with.
    func addPeriodicTimeObserver(
        forInterval interval: MediaTime, queue: DispatchQueue, picture: TimeObserver.Picture?,
        using block: @escaping @Sendable (MediaTime) -> Void
    ) -> TimeObserverToken {
        precondition(interval.isNumeric && interval > .zero, "a periodic time observer needs a positive interval")
        return addTimeObserver(
            TimeObserver(schedule: .periodic(interval), queue: queue, picture: picture, block: block))
    }

    /// Calls `block` on `queue` each time playback crosses one of `times` in an item's timeline (once per item, as
    /// the frame at that time is heard). Times a seek jumps over are not reported; start, stop and seek are not
    /// reported either. Non-numeric times are ignored. Any thread; the block never runs on the audio path.
    package func addBoundaryTimeObserver(
        forTimes times: [MediaTime], queue: DispatchQueue = .main, using block: @escaping @Sendable () -> Void
    ) -> TimeObserverToken {
        addBoundaryTimeObserver(forTimes: times, queue: queue, picture: nil, using: block)
    }

    /// As the public method, with `picture` taking the picture each call is made with.
    func addBoundaryTimeObserver(
        forTimes times: [MediaTime], queue: DispatchQueue, picture: TimeObserver.Picture?,
        using block: @escaping @Sendable () -> Void
    ) -> TimeObserverToken {
        let boundaries = Array(Set(times.filter(\.isNumeric))).sorted()
        return addTimeObserver(
            TimeObserver(schedule: .boundaries(boundaries), queue: queue, picture: picture) { _ in block() })
    }

    func addTimeObserver(_ observer: TimeObserver) -> TimeObserverToken {
        let audible = audibleFrame()
        let token = state.withLock { $0.addTimeObserver(observer, audibleFrame: audible) }
        renderer.wakeProgressWaiter()
        return token
    }

    /// Removes a time observer. Once this returns, no new call of its block starts (a call already running on
    /// another thread is waited for, unless this is called from inside an observer call). Any thread.
    package func removeTimeObserver(_ token: TimeObserverToken) {
        let removed = state.withLock { $0.timeObservers.removeValue(forKey: token.id) }
        carryOut([.deactivateObservers(removed.map { [$0.observer] } ?? [])])
    }

    /// Tells every periodic observer the current time (at start and stop), if an item is being heard.
    func reportCurrentTime() {
        let status = status()
        guard let item = status.current else { return }
        let time = MediaTime(value: Int64(status.elapsedFrames), timescale: Int32(item.format.sampleRate))
        let observers = state.withLock { $0.timeObservers.values.map(\.observer).filter(\.isPeriodic) }
        observers.forEach { $0.deliver(time, in: item.entry) }
    }

    /// Starts or resumes playback. The first call starts the engine's threads.
    package func play() {
        // Reported before playback starts, so the time is where it starts (and, on the first play, nothing is
        // reported: the observers' 0 follows when the first frame is heard).
        reportCurrentTime()
        carryOut(state.withLock { $0.play() })
    }

    /// Opens the first queued entry and the output, paused, and decodes ahead, so that the first ``play()`` is
    /// heard as soon as the output resumes (the sound server's round trip) instead of after the opening. Nothing is
    /// heard and no time is reported until then. Does nothing once played or prerolled. Any thread.
    package func preroll() {
        carryOut(state.withLock { $0.preroll() })
    }

    /// True between ``play()`` and ``pause()``, also while a lost output is waited for to play on. Part of
    /// ``BackgroundPausable``.
    package var isPlaybackRequested: Bool { state.withLock { $0.isPlaybackRequested } }

    /// Pauses playback; the sink keeps what it holds, so ``play()`` resumes at the same frame.
    package func pause() {
        carryOut(state.withLock { $0.pause() })
        reportCurrentTime()
    }

    /// Stops the item being heard, drops what was decoded ahead of it and flushes the output, then plays on from
    /// the next entry. No ``PlaybackEvent/itemFinished(_:)`` is posted for the item left. Does nothing when nothing
    /// is queued. Any thread; takes effect within one decoding chunk.
    package func advanceToNextItem() {
        carryOut(state.withLock { $0.advanceToNextItem() })
    }

    /// The playback volume, 0 (silent) to 1 (as decoded, the default); values above 1 amplify and may clip.
    /// Through PulseAudio it is the stream's volume in the server, heard within the sink's own latency; elsewhere
    /// (PipeWire, the ``NullSink``) it applies to frames rendered from now on, so through a server's buffer it is
    /// heard that much later. Any thread.
    package var volume: Float {
        get { state.withLock { $0.volume } }
        set { carryOut(state.withLock { $0.setVolume(newValue) }) }
    }

    /// Adds `delta` to ``volume`` within 0...1, in one step, and returns the new volume. Any thread.
    package func changeVolume(by delta: Float) -> Float {
        let (volume, actions) = state.withLock { state in
            let actions = state.changeVolume(by: delta)
            return (state.volume, actions)
        }
        carryOut(actions)
        return volume
    }

    /// Silences playback without changing ``volume``. Any thread.
    package var isMuted: Bool {
        get { state.withLock { $0.isMuted } }
        set { carryOut(state.withLock { $0.setMuted(newValue) }) }
    }

    /// Hands the state's gain, as it is now, to the renderer and to the sink, which decides which of them applies
    /// it. Reading and handing on are one step under `gainHandOff`: two threads changing the volume at once could
    /// otherwise hand on their gains in the other order and leave the older one applied.
    private func applyGain() {
        gainHandOff.withLock { _ in
            let gain = state.withLock { $0.gain }
            renderer.gain = gain
            sink.setGain(gain)
        }
    }

    /// Plays the first entry of ``queue()`` (the item being heard, or the one about to be) from `frame` (0-based,
    /// sample-exact; past the end, the item ends at once), dropping what was decoded ahead and flushing the output.
    /// Returns false when the queue is empty. `completion` (on the decoding thread; keep it short) is told `true` once
    /// decoding has restarted at `frame`, or `false` if another skip, seek or edit replaced this one first. Any thread.
    @discardableResult
    package func seek(toFrame frame: Int, completion: (@Sendable (Bool) -> Void)? = nil) -> Bool {
        let (accepted, actions) = state.withLock { $0.seek(toFrame: frame, completion: completion) }
        carryOut(actions)
        return accepted
    }

    /// Wakes the decoding thread wherever it waits: idle, or for space in the ring.
    func wakeDecoder() {
        decoderWake.signal()
        renderer.wakeProducer()
    }

    /// What is being heard now.
    package func status() -> Status {
        let audible = audibleFrame()
        return state.withLock { $0.status(audibleFrame: audible) }
    }

    /// The entry that plays next, and from where: see ``EntryStart``. Any thread; never waits.
    package func cuedStart() -> EntryStart? {
        state.withLock { $0.cuedStart }
    }

    /// Stops playback and the engine's threads, closes the output (and takes back the handlers it was given, so
    /// that nothing it reports afterwards reaches the engine), and finishes ``events``. Time observers are
    /// removed: none is called after this, and a block that holds the engine no longer keeps it alive. Safe to call
    /// twice.
    package func shutdown() {
        carryOut(state.withLock { $0.shutDown() })
    }

    /// Blocks until every skip, seek, cue and edit asked for so far has taken effect in the ring and the output
    /// (what was decoded ahead dropped and the output flushed, or only what follows an item cut), or until
    /// `deadline`: false then. For a test that renders by hand and must render what they left. One waiter at a time.
    package func waitUntilRestartsAreCarriedOut(until deadline: DispatchTime) -> Bool {
        while !state.withLock({ $0.restartsAreCarriedOut }) {
            guard restartCarriedOut.wait(timeout: deadline) == .success else { return false }
        }
        return true
    }

    /// The ring frame being heard now: estimated from the sink's latency, and never less than what a drain
    /// confirmed.
    func audibleFrame() -> Int {
        let frozen = frameHeardAtLoss.load(ordering: .acquiring)
        if frozen >= 0 { return frozen }
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
    /// may pile up in it), and tells `changed` of changes its observers read that are no events. For the player built
    /// on this engine; call before the first play.
    func listen(
        changed: @escaping @Sendable () -> Void = {}, _ listener: @escaping @Sendable (PlaybackEvent) -> Void
    ) {
        eventListener.withLock { $0 = EventListener(hear: listener, changed: changed) }
        eventContinuation.finish()
    }

    /// The download of `entry`'s item lost its server (`loss`), or has it again (nil): recorded on the player's item,
    /// and the player told. The download's thread.
    func connectionChanged(_ entry: QueueEntry, _ loss: ConnectionLoss?) {
        guard state.withLock({ $0.player.items[entry.id] })?.noteConnection(loss) == true else { return }
        eventListener.withLock { $0 }?.changed()
    }

    func post(_ event: PlaybackEvent) {
        eventListener.withLock { $0 }?.hear(event)
        eventContinuation.yield(event)
    }

    /// True once the threads must stop: shut down.
    var isShuttingDown: Bool { state.withLock { $0.phase.isFinal } }

    func outputFailed(_ error: AudioSinkError) {
        carryOut(state.withLock { $0.outputFailed(error) })
    }

    /// Pauses or resumes the output as the phase is now (playing or not), unless it is known to be so already
    /// (`knownPaused`). Threads carry out their actions outside the lock, so two threads pausing and playing at once
    /// can reach the sink in the opposite order to their transitions: each thread tells the sink the phase, reads
    /// the phase again and tells it again until they agree. So the last word the sink hears is the phase as it
    /// stands, since a thread that changes the phase later tells the sink after that. Any thread but the sink's.
    func matchOutputToPhase(knownPaused: Bool? = nil) {
        var told = knownPaused
        while case let paused = !state.withLock({ $0.isPlaying }), paused != told {
            sink.setPaused(paused)
            told = paused
        }
    }

    /// Carries out what a transition returned, in order, outside the lock.
    func carryOut(_ actions: [Action]) {
        for action in actions {
            switch action {
            case .startThreads:
                PosixThread.start(name: "QP decode") { [self] in runDecoding() }
                PosixThread.start(name: "QP events") { [self] in runEvents() }
            case .resumeOutput:
                matchOutputToPhase()
                // The event thread may be waiting out a pause: observers due in what is now heard are told on time.
                renderer.wakeProgressWaiter()
            case .pauseOutput:
                matchOutputToPhase()
            case .wakeDecoder:
                wakeDecoder()
            case .failSeeks(let completions):
                completions.forEach { $0(false) }
            case .finishSeeks(let completions):
                completions.forEach { $0(true) }
            case .reportTime:
                reportCurrentTime()
            case .applyGain:
                applyGain()
            case .deactivateObservers(let observers):
                observers.forEach { $0.deactivate() }
            case .stopEverything:
                wakeDecoder()
                reconnectWake.signal()
                renderer.wakeProgressWaiter()
                sink.stop()
                // The handlers hold the engine weakly, and a call on the output's thread holds it for its length:
                // one that outlived the caller's last reference would free the engine, and with it the output, on
                // the output's own thread (libpulse aborts when its sink is freed there: a server killed just after
                // a shutdown). PulseAudio's setters take the lock its calls run under, so no call is left after
                // these; other sinks make their calls on the thread that stop() ended.
                sink.setFailureHandler { _ in }
                sink.setSuspensionHandler { _ in }
                sink.setTimingHandler {}
                eventContinuation.finish()
            case .recoverOutput:
                wakeDecoder()
                renderer.wakeProgressWaiter()
            case .closeLostOutput(let heardFrame):
                frameHeardAtLoss.store(heardFrame, ordering: .releasing)
                sink.stop()
            case .post(let event):
                post(event)
            }
        }
    }
}

import CPulse
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import PosixThreads

/// Plays through a PulseAudio server with the asynchronous API on a `pa_threaded_mainloop`.
///
/// - The server is reached at ``serverAddress`` (`unix:/path`, `tcp:host:port`) or, when that is nil, where
///   libpulse looks by default (`$PULSE_SERVER`, then `$XDG_RUNTIME_DIR/pulse/native`). Autospawn is off.
/// - Frames go out as signed 16-bit, converted by the `Renderer` exactly as libmpg123 would.
/// - Pause corks the stream; flush discards what the server holds; drain waits until everything was heard.
/// - A server that dies is reported once through the failure handler; no call hangs on a dead server.
///   `reconnect()` connects to it again once it answers (the engine calls it with backoff).
/// - libpulse's thread, which renders, asks for real-time priority (`SCHED_FIFO` 4) where the process may have it;
///   a refusal is logged once by the player, and playback goes on at normal priority.
///
/// Why `@unchecked Sendable` and the raw pointers are safe: every libpulse object here is touched only with the
/// threaded main loop's lock held, either by a public method (which takes it) or by a libpulse callback (which
/// libpulse runs on the loop's thread with the lock held). The mutable fields below are guarded by that same
/// lock. Callbacks find `self` through an unretained pointer; `deinit` clears every callback before the object
/// goes away. The write callback renders straight into libpulse's own buffer (`pa_stream_begin_write`), so the
/// audio path allocates nothing of ours.
public final class PulseAudioSink: AudioSink, @unchecked Sendable {
    /// The address given at init, or nil for libpulse's default.
    public let serverAddress: String?
    /// `PulseAudio (<address>)`.
    public var name: String { "PulseAudio (\(Self.describe(serverAddress)))" }

    /// How the server buffers the stream: how much it holds (the target) and how much it asks for at a time.
    struct Buffering {
        /// Target buffering in the server. A cork silences the stream and a flush drops what it holds at once,
        /// whatever this is.
        var targetMilliseconds: Int
        /// The request size. The libpulse thread wakes twice per request: for the request, and for the memory block
        /// the server releases once it has played it (the sink's block later).
        var requestMilliseconds: Int
    }

    /// PulseAudio's buffering: requests of 200 ms, so the libpulse thread wakes 10 times a second (20 at 100 ms, 40
    /// at the server's default of 50), of a 500 ms target, which leaves the sink (500 − 2 × 200) / 2 = 50 ms of
    /// latency of its own under `PA_STREAM_ADJUST_LATENCY`, as at the smaller sizes: the reported time against the
    /// monitor does not move with the target (with no latency of its own left, at 100 ms requests of a 200 ms
    /// target, it read 0.6 ms early). The volume is the stream's own in the server (``setGain(_:)``), heard within
    /// the sink's latency, so the deeper buffer delays nothing a listener does: pause, seek and skip cork or flush.
    static let pulseAudioBuffering = Buffering(targetMilliseconds: 500, requestMilliseconds: 200)

    /// PipeWire's buffering: it turns the request size into its graph's quantum, and at 200 ms (8,192 frames, its
    /// largest) play after pause was heard 0.2 s late; the volume stays the renderer's there, heard after the
    /// buffer (300 ms at most).
    static let pipeWireBuffering = Buffering(targetMilliseconds: 300, requestMilliseconds: 100)

    let logger: Logger
    let applicationName: String
    let mainloop: OpaquePointer
    /// Replaced by `reconnect()`; guarded by the main loop lock once the loop runs.
    var context: OpaquePointer
    // Guarded by the main loop lock:
    var stream: OpaquePointer?
    var renderer: Renderer?
    var format: AudioFormat?
    var stoppedAtEndOfStream = false
    /// The server is PipeWire's `pipewire-pulse` (its server name says so), which needs the end of a stream padded.
    var serverIsPipeWire = false
    var failureHandler: (@Sendable (AudioSinkError) -> Void)?
    var suspensionHandler: (@Sendable (Bool) -> Void)?
    var timingHandler: (@Sendable () -> Void)?
    /// The server has suspended the sink the stream plays on: nothing is read, the listener does not move on.
    var isSuspended = false
    /// When the suspension was seen: a timing report taken before it is carried forward to then, and no further.
    var suspendedAt: timeval?
    /// A change of suspension not yet told to the handler: it is told once a timing report taken after the change
    /// has arrived, so that a position read when the handler hears of it is where the listener stands.
    var suspensionAwaitingReport: Bool?
    var failureReported = false
    var wasReady = false
    /// The first connection, made in the background when the caller waits for a server anyway, has neither
    /// succeeded nor failed yet (see ``awaitFirstConnection()``).
    var isMakingFirstConnection = false
    var timerFired = false
    var lastTimingRequest: pa_usec_t = 0
    /// The timer that asks for timing reports while the stream plays (see ``scheduleTimingRequests()``).
    var timingTimer: OpaquePointer?
    /// The timer's current period: ``firstTimingInterval`` after a change, doubling to ``longestTimingInterval``.
    var timingInterval: pa_usec_t = 0
    var isCorked = false
    /// Once the connection is lost, the moment that was noticed: the last timing report is carried forward to it
    /// and no further. A server killed is noticed at once, and PulseAudio stopped by SIGTERM closes its connections
    /// about 7 ms after the signal, with no stream event first (measured with a C client). So a restart resumes
    /// within a few milliseconds of the last sound heard: +1.2 ms median, +1.7 ms at worst in five graceful
    /// restarts (`scripts/bench_restart.py`). Taking it as the middle of the request interval after the last
    /// request, as before, resumed 26 ms early (heard twice), and at 200 ms requests 69 ms off on PipeWire.
    var lostAt: timeval?
    /// The stream's latest timing report, as last read.
    var lastTiming: pa_timing_info?
    /// The frame heard as last told, which later readings do not move back (see ``latencyFrames()``).
    var heardFrame = MonotonicHeardFrame()
    /// The default sink's sample rate, read at each connection; nil before the first.
    var sinkSampleRate: Int?
    /// The gain asked for (``setGain(_:)``), applied as the stream's volume when ``appliesGainInServer``.
    var gain: Float = 1
    /// The stream's volume in the server carries the gain (PulseAudio), so the renderer leaves the samples as they
    /// are; on PipeWire, whose handling of a stream's volume has not been measured here, the renderer applies it.
    var appliesGainInServer: Bool { !serverIsPipeWire }

    /// Connects to the server at `server` (nil: libpulse's default). Throws ``AudioSinkError/Code/serverUnreachable``
    /// naming the address tried and how to start a server; with `waitsForServer`, an absent server is no error:
    /// the sink starts disconnected, and a player on it waits for the server (reconnecting with backoff) and plays
    /// once it answers.
    /// With `waitsForServer` the first connection is made in the background (its three round trips to the server
    /// overlap the caller's own start-up), and every call that needs the server waits for it to succeed or fail.
    public init(
        server: String? = nil, applicationName: String = "QueuePlayer", logger: Logger, waitsForServer: Bool = false
    ) throws(AudioSinkError) {
        serverAddress = server
        self.logger = logger
        self.applicationName = applicationName
        guard let mainloop = pa_threaded_mainloop_new() else {
            throw AudioSinkError(
                .serverUnreachable, reason: "libpulse could not create a main loop",
                suggestion: "Check that libpulse0 is installed")
        }
        self.mainloop = mainloop
        guard let context = pa_context_new(pa_threaded_mainloop_get_api(mainloop), applicationName) else {
            pa_threaded_mainloop_free(mainloop)
            throw AudioSinkError(
                .serverUnreachable, reason: "libpulse could not create a context",
                suggestion: "Check that libpulse0 is installed")
        }
        self.context = context
        // libpulse's thread runs the write callback, so it is the render thread.
        pa_threaded_mainloop_set_name(mainloop, "QP render")
        guard pa_threaded_mainloop_start(mainloop) >= 0 else {
            throw AudioSinkError(
                .serverUnreachable, reason: "libpulse could not start its thread",
                suggestion: "Check the process limits")
        }
        if RealTimeScheduling.isAvailable {
            // libpulse frees what it allocates for the call only when the callback runs, and a loop stopped before
            // then (a sink that fails at once) leaks it: wait for it. The semaphore outlives the callback for that
            // reason, so the unretained pointer stays valid while it is used.
            let raised = DispatchSemaphore(value: 0)
            pa_threaded_mainloop_lock(mainloop)
            pa_threaded_mainloop_once_unlocked(
                mainloop,
                { _, semaphore in
                    RealTimeScheduling.makeCurrentThreadRealTime()
                    Unmanaged<DispatchSemaphore>.fromOpaque(semaphore!).takeUnretainedValue().signal()
                }, Unmanaged.passUnretained(raised).toOpaque())
            pa_threaded_mainloop_unlock(mainloop)
            raised.wait()
        }
        guard waitsForServer else {
            pa_threaded_mainloop_lock(mainloop)
            defer { pa_threaded_mainloop_unlock(mainloop) }
            // On a throw, every stored property is set, so `deinit` releases the loop and context.
            try connectContext()
            return
        }
        isMakingFirstConnection = true
        // The closure keeps the sink alive until the connection is made or has failed.
        DispatchQueue.global(qos: .userInitiated).async { [self] in makeFirstConnection() }
    }

    /// Connects in the background for `init`; a server that does not answer is no error yet.
    func makeFirstConnection() {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        do {
            try connectContext()
        } catch {
            logger.debug("no PulseAudio server yet: \(error)")
        }
        isMakingFirstConnection = false
        pa_threaded_mainloop_signal(mainloop, 0)
    }

    /// Waits while the first connection is being made in the background. Lock held, not on libpulse's thread.
    func awaitFirstConnection() {
        while isMakingFirstConnection {
            pa_threaded_mainloop_wait(mainloop)
        }
    }

    deinit {
        stop()
        pa_threaded_mainloop_lock(mainloop)
        pa_context_set_state_callback(context, nil, nil)
        pa_context_disconnect(context)
        pa_context_unref(context)
        pa_threaded_mainloop_unlock(mainloop)
        pa_threaded_mainloop_stop(mainloop)
        pa_threaded_mainloop_free(mainloop)
    }

    /// Connects the context and waits until it is ready or has failed. Lock held, main loop running.
    func connectContext() throws(AudioSinkError) {
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        pa_context_set_state_callback(
            context,
            { _, userdata in
                PulseAudioSink.withSink(userdata) { $0.contextStateChanged() }
            }, userdata)
        let connected = withServerCString { server in pa_context_connect(context, server, PA_CONTEXT_NOAUTOSPAWN, nil) }
        guard connected >= 0 else { throw unreachableError() }
        while true {
            let state = pa_context_get_state(context)
            if state == PA_CONTEXT_READY { break }
            if cpulse_context_is_good(state) == 0 { throw unreachableError() }
            pa_threaded_mainloop_wait(mainloop)
        }
        wasReady = true
        failureReported = false
        let named = pa_context_get_server_info(
            context,
            { _, info, userdata in
                PulseAudioSink.withSink(userdata) { sink in
                    if let name = info?.pointee.server_name {
                        // `strstr`, not `String.contains`: that one is _StringProcessing's, and the only code of the
                        // daemon that runs it and the regex parser's (some 850 KiB of pages resident for one search).
                        sink.serverIsPipeWire = strstr(name, "PipeWire") != nil
                    }
                    if let rate = info?.pointee.sample_spec.rate, rate > 0 { sink.sinkSampleRate = Int(rate) }
                    pa_threaded_mainloop_signal(sink.mainloop, 0)
                }
            }, userdata)
        waitFor(named)
        // The default sink's own rate, where it differs from the server's default (a sound card opened at 48 kHz).
        let described = pa_context_get_sink_info_by_name(
            context, "@DEFAULT_SINK@",
            { _, info, _, userdata in
                PulseAudioSink.withSink(userdata) { sink in
                    if let rate = info?.pointee.sample_spec.rate, rate > 0 { sink.sinkSampleRate = Int(rate) }
                    pa_threaded_mainloop_signal(sink.mainloop, 0)
                }
            }, userdata)
        waitFor(described)
        logger.debug(
            "connected to \(serverIsPipeWire ? "PipeWire's PulseAudio server" : "PulseAudio")",
            metadata: ["server": "\(Self.describe(serverAddress))"])
    }

    /// Connects to the server again with a new context, after it went away or was not there yet: throws
    /// ``AudioSinkError/Code/serverUnreachable`` while none answers. Does nothing while connected. The old stream,
    /// if any, is closed; `start(format:renderer:paused:)` opens a new one. Any thread but libpulse's; blocks until
    /// the server answers or refuses (milliseconds).
    public func reconnect() throws(AudioSinkError) {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        awaitFirstConnection()
        guard pa_context_get_state(context) != PA_CONTEXT_READY else { return }
        guard let fresh = pa_context_new(pa_threaded_mainloop_get_api(mainloop), applicationName) else {
            throw AudioSinkError(
                .serverUnreachable, reason: "libpulse could not create a context", suggestion: "Check free memory")
        }
        closeStream()
        pa_context_set_state_callback(context, nil, nil)
        pa_context_disconnect(context)
        pa_context_unref(context)
        context = fresh
        wasReady = false
        try connectContext()
    }

    func withServerCString<T>(_ body: (UnsafePointer<CChar>?) -> T) -> T {
        guard let serverAddress else { return body(nil) }
        return serverAddress.withCString { body($0) }
    }

    func unreachableError() -> AudioSinkError {
        let cause = String(cString: pa_strerror(pa_context_errno(context)))
        return AudioSinkError(
            .serverUnreachable,
            reason: "no PulseAudio server answered at \(Self.describe(serverAddress)) (\(cause))",
            suggestion: "Start one (`pulseaudio --start`, or `scripts/pulse-server start` in this repository), "
                + "or pass --server unix:/path/to/native or tcp:host:port")
    }

    /// The address libpulse will try, for messages.
    static func describe(_ server: String?) -> String {
        if let server { return server }
        let environment = ProcessInfo.processInfo.environment
        if let fromEnvironment = environment["PULSE_SERVER"], !fromEnvironment.isEmpty { return fromEnvironment }
        let runtime = environment["XDG_RUNTIME_DIR"] ?? "/run/user/\(getuid())"
        return "unix:\(runtime)/pulse/native"
    }
}

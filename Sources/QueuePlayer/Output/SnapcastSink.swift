import Dispatch
import PosixThreads
import Synchronization

/// Plays into a Snapcast server, which keeps rooms in step: the sink connects to a snapserver `tcp` source in
/// server mode (`source = tcp://HOST:PORT?name=QueuePlayer&mode=server&sampleformat=48000:16:2`) and writes
/// 16-bit little-endian stereo PCM at the source's rate, in real time.
///
/// A tcp source in server mode, not a pipe: either side may start first, a restart of either is a new connection
/// (the sink reconnects, as to a sound server), and the server may be on another box.
///
/// Snapserver reads a source at the pace of its own clock, so a writer must keep real time itself: the sink's thread
/// sends one 20 ms period (snapserver's default chunk) when it is due, one period ahead, and a period of silence
/// first whenever it starts sending again. What was sent cannot be taken back: a pause, seek or skip is heard in the
/// rooms after Snapcast's buffer and what was sent ahead, so the sink sends as little ahead as keeps snapserver fed.
/// When the queue runs dry or is paused it follows the last frames with `runoutPeriods` of silence, so that the
/// clients, which read a little more than a chunk at a time, play those frames out instead of dropping the last
/// partial read; then it sends nothing, and snapserver marks the stream idle.
///
/// Its latency counts frames rendered that the sink's clock has not yet sent on; Snapcast's own buffer
/// (1 s by default) comes on top.
///
/// Threading: any thread may call it (calls are serialised); the render loop allocates nothing and takes no lock.
public final class SnapcastSink: AudioSink {
    /// The host of the snapserver source.
    public let host: String
    /// The port of the snapserver source.
    public let port: Int
    /// The source's sample rate (the rate in its `sampleformat`); items at other rates are resampled.
    public let sampleRate: Int
    /// Frames per send: 20 ms.
    let periodFrames: Int
    /// Periods of silence sent after the last frames before the sink falls silent.
    static let runoutPeriods = 5
    /// Periods sent ahead of the clock.
    static let periodsAhead = 1

    /// `Snapcast (tcp://HOST:PORT, RATE Hz)`.
    public var name: String { "Snapcast (\(address), \(sampleRate) Hz)" }
    /// The source's rate: every item is played at it.
    public var outputSampleRate: Int? { sampleRate }
    /// False: what was sent to the server is heard, and nothing sits in the sink to throw away.
    package var flushDropsUnplayedFrames: Bool { false }

    private var address: String { host.contains(":") ? "tcp://[\(host)]:\(port)" : "tcp://\(host):\(port)" }

    private let connection = Mutex<PCMSocket?>(nil)
    private let running = Mutex<RunningThread?>(nil)
    private let failureHandler = Mutex<(@Sendable (AudioSinkError) -> Void)?>(nil)
    private let wake = DispatchSemaphore(value: 0)
    private let isPaused = Atomic<Bool>(false)
    private let generation = Atomic<Int>(0)
    /// Set by the sink's thread once it has sent everything up to the end of the stream.
    private let isAtEndOfStream = Atomic<Bool>(false)
    private let reachedEnd = DispatchSemaphore(value: 0)

    private struct RunningThread {
        var renderer: Renderer
        var clock: DeviceClock
        var exited: DispatchSemaphore
    }

    /// A sink for the snapserver source at `host` and `port` (snapserver's usual tcp source port is 4953) whose
    /// sample format is `sampleRate`:16:2. Connects when playback starts; a server that is not there yet is waited
    /// for, as the engine reconnects.
    public init(host: String, port: Int = 4953, sampleRate: Int = 48_000) {
        self.host = host
        self.port = port
        self.sampleRate = sampleRate
        periodFrames = sampleRate / 50
    }

    /// Connects if need be, then starts the thread that sends what `renderer` renders (parked from the start when
    /// `paused`). Throws when no server answers, or when `format` is not the source's.
    package func start(format: AudioFormat, renderer: Renderer, paused: Bool) throws(AudioSinkError) {
        stop()
        guard format.sampleRate == sampleRate, format.channelCount == Renderer.channelCount else {
            throw AudioSinkError(
                .streamFailed, reason: "the Snapcast source at \(address) takes \(sampleRate):16:2, not \(format)",
                suggestion: "this is a bug in QueuePlayer: items are resampled to the source's rate")
        }
        let socket = try connectedSocket()
        isPaused.store(paused, ordering: .releasing)
        isAtEndOfStream.store(false, ordering: .releasing)
        let clock = DeviceClock(frames: renderer.position.read().sinkFrames, sampleRate: sampleRate)
        if paused { clock.pause() }
        let exited = DispatchSemaphore(value: 0)
        let myGeneration = generation.add(1, ordering: .acquiringAndReleasing).newValue
        running.withLock { $0 = RunningThread(renderer: renderer, clock: clock, exited: exited) }
        PosixThread.start(name: "QP snapcast") { [self] in
            let sent = send(from: renderer, clock: clock, socket: socket, generation: myGeneration)
            if !sent { lose(socket) }
            exited.signal()
        }
    }

    /// Stops sending (true) or sends again (false). In both cases the clock stands or runs at once; a pause first
    /// sends the runout of silence.
    package func setPaused(_ paused: Bool) {
        running.withLock { running in
            if paused {
                isPaused.store(true, ordering: .releasing)
                running?.clock.pause()
            } else {
                running?.clock.resume()
                isPaused.store(false, ordering: .releasing)
            }
        }
        wake.signal()
    }

    /// Does nothing: what was sent is the server's, and the sink holds nothing unsent.
    package func flush() {}

    /// Waits until the sink's thread has sent everything up to the end of the stream. Throws if the connection is
    /// lost meanwhile.
    package func drain() throws(AudioSinkError) {
        while let renderer = running.withLock({ $0?.renderer }) {
            if renderer.hasRenderedEverything, isAtEndOfStream.load(ordering: .acquiring) { return }
            _ = reachedEnd.wait(timeout: .now() + .milliseconds(100))
        }
        if connection.withLock({ $0 == nil }) {
            throw disconnected(reason: "the connection closed before the last frames were sent")
        }
    }

    /// Wakes the sink's thread after the renderer reported the end of the stream.
    package func resumeAfterEndOfStream() {
        wake.signal()
    }

    /// The frames rendered that the clock has not yet sent on. Any thread but the sink's.
    package func latencyFrames() -> Int {
        guard let (renderer, clock) = running.withLock({ $0.map { ($0.renderer, $0.clock) } }) else { return 0 }
        return max(0, renderer.position.read().sinkFrames - clock.playedFrames())
    }

    /// Stops the sink's thread and waits until it has exited. The connection stays open for the next stream.
    package func stop() {
        generation.add(1, ordering: .acquiringAndReleasing)
        guard
            let thread = running.withLock({ state in
                defer { state = nil }
                return state
            })
        else { return }
        wake.signal()
        reachedEnd.signal()
        thread.exited.wait()
    }

    /// Connects to the source unless connected; throws ``AudioSinkError/Code/serverUnreachable`` naming the
    /// address and the source line snapserver needs.
    package func reconnect() throws(AudioSinkError) {
        _ = try connectedSocket()
    }

    private func connectedSocket() throws(AudioSinkError) -> PCMSocket {
        if let socket = connection.withLock({ $0 }) { return socket }
        do {
            let socket = try PCMSocket.connect(host: host, port: port)
            connection.withLock { $0 = socket }
            return socket
        } catch {
            throw AudioSinkError(
                .serverUnreachable, reason: "no Snapcast server took the connection at \(address) (\(error))",
                suggestion: "give snapserver the source `tcp://\(host):\(port)?name=QueuePlayer&mode=server"
                    + "&sampleformat=\(sampleRate):16:2` and start it; QueuePlayer connects once it listens")
        }
    }

    /// Sets the closure told when the connection is lost during playback.
    package func setFailureHandler(_ handler: @escaping @Sendable (AudioSinkError) -> Void) {
        failureHandler.withLock { $0 = handler }
    }

    /// Forgets `socket` (when it is still the sink's) and tells the failure handler, from the sink's thread after
    /// its loop has ended.
    private func lose(_ socket: PCMSocket) {
        let wasCurrent = connection.withLock { current in
            guard current === socket else { return false }
            current = nil
            return true
        }
        guard wasCurrent, let handler = failureHandler.withLock({ $0 }) else { return }
        handler(disconnected(reason: "the Snapcast server at \(address) closed the connection"))
    }

    private func disconnected(reason: String) -> AudioSinkError {
        AudioSinkError(
            .serverDisconnected, reason: reason,
            suggestion: "QueuePlayer reconnects when snapserver is back; see snapserver's log for why it went away")
    }

    /// The sink's thread: sends a period when it is due, until stopped (true) or the connection fails (false).
    private func send(
        from renderer: Renderer, clock: DeviceClock, socket: PCMSocket, generation myGeneration: Int
    )
        -> Bool
    {
        var buffer = [Int16](repeating: 0, count: periodFrames * Renderer.channelCount)
        var pacer = Pacer(periodFrames: periodFrames, sampleRate: sampleRate)
        var runoutLeft = 0
        while generation.load(ordering: .acquiring) == myGeneration {
            let paused = isPaused.load(ordering: .acquiring)
            if paused, runoutLeft == 0 {
                pacer.stop()
                wake.wait()
                continue
            }
            guard let due = pacer.due() else {
                // Snapserver stamps the first chunk it reads after a pause with its old timeline, and its clients
                // drop that chunk as too old: let it be silence.
                for index in buffer.indices { buffer[index] = 0 }
                guard buffer.withUnsafeBytes({ socket.send($0) }) else { return false }
                pacer.sent()
                continue
            }
            if DispatchTime.now() < due {
                _ = wake.wait(timeout: due)
                continue
            }
            var frameCount = 0
            var ended = false
            if paused {
                runoutLeft -= 1
            } else {
                isAtEndOfStream.store(false, ordering: .releasing)
                _ = clock.start()
                let result = buffer.withUnsafeMutableBufferPointer { pointer in
                    var span = pointer.mutableSpan
                    return renderer.render(into: &span, underrun: .padWithSilence)
                }
                clock.handedOver(renderer.position.read().sinkFrames)
                frameCount = result.frameCount
                ended = result.reachedEndOfStream
                runoutLeft = ended ? max(0, runoutLeft - 1) : Self.runoutPeriods
            }
            if ended, frameCount == 0, runoutLeft == 0 {
                clock.stand()
                pacer.stop()
                isAtEndOfStream.store(true, ordering: .releasing)
                reachedEnd.signal()
                wake.wait()
                continue
            }
            for index in (frameCount * Renderer.channelCount)..<buffer.count { buffer[index] = 0 }
            for index in buffer.indices { buffer[index] = buffer[index].littleEndian }
            guard buffer.withUnsafeBytes({ socket.send($0) }) else { return false }
            pacer.sent()
        }
        return true
    }
}

/// When the sink's thread sends its next period: ``SnapcastSink/periodsAhead`` periods ahead of real time from
/// the first send after a stop, one period each period after it.
private struct Pacer {
    let periodNanoseconds: UInt64
    private var anchor: UInt64 = 0
    private var periodsSent: UInt64 = 0

    init(periodFrames: Int, sampleRate: Int) {
        periodNanoseconds = DeviceClock.nanoseconds(for: periodFrames, rate: sampleRate)
    }

    /// The instant the next period is due, or nil when sending starts afresh.
    func due() -> DispatchTime? {
        guard anchor != 0 else { return nil }
        let ahead = UInt64(SnapcastSink.periodsAhead)
        let periods = periodsSent > ahead ? periodsSent - ahead : 0
        return DispatchTime(uptimeNanoseconds: anchor + periods * periodNanoseconds)
    }

    /// Notes one period sent.
    mutating func sent() {
        if anchor == 0 { anchor = DispatchTime.now().uptimeNanoseconds }
        periodsSent += 1
    }

    /// Forgets the timeline: the next period starts a new one.
    mutating func stop() {
        anchor = 0
        periodsSent = 0
    }
}

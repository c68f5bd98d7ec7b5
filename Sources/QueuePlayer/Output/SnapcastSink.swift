import Dispatch
import Synchronization

/// Plays into a Snapcast server, which keeps rooms in step: the sink connects to a snapserver `tcp` source in
/// server mode (`source = tcp://HOST:PORT?name=QueuePlayer&mode=server&sampleformat=48000:16:2`) and writes
/// 16-bit little-endian stereo PCM at the source's rate, in real time.
///
/// A tcp source in server mode, not a pipe: either side may start first, a restart of either is a new connection
/// (the sink reconnects, as to a sound server), and the server may be on another box.
///
/// Snapserver reads a source at the pace of its own clock, so a writer must keep real time itself: the sink's thread
/// sends one 20 ms period (snapserver's default chunk) when it is due, 30 ms ahead, and a period of silence
/// first whenever it starts sending again. What was sent cannot be taken back: a pause, seek or skip is heard in the
/// rooms after Snapcast's buffer and what was sent ahead, so the sink sends as little ahead as keeps snapserver fed.
/// When the queue runs dry or is paused it follows the last frames with `runoutPeriods` of silence, so that the
/// clients, which read a little more than a chunk at a time, play those frames out instead of dropping the last
/// partial read; then it sends nothing, and snapserver marks the stream idle.
///
/// The rooms play each period Snapcast's buffer after its place in the sent timeline, so the sink keeps a schedule
/// of what it sent and reports as latency every frame rendered that the rooms have not yet played: the time the
/// player reports is what the rooms hear, also through the buffer's worth they go on playing after a pause or a
/// seek. Give the sink the server's `buffer` setting, which snapserver does not report.
///
/// Threading: any thread may call it (calls are serialised); the render loop allocates nothing and takes no lock, and
/// runs at real-time priority where the process may have it.
public final class SnapcastSink: AudioSink {
    /// The host of the snapserver source.
    public let host: String
    /// The port of the snapserver source.
    public let port: Int
    /// The source's sample rate (the rate in its `sampleformat`); items at other rates are resampled.
    public let sampleRate: Int
    /// Snapcast's end-to-end latency, snapserver's `buffer` setting: the rooms play what is sent this long after.
    public let bufferMilliseconds: Int
    /// Frames per send: 20 ms.
    let periodFrames: Int
    /// Periods of silence sent after the last frames before the sink falls silent.
    static let runoutPeriods = 5
    /// How far ahead of its place in the timeline a period is sent: snapserver reads a chunk when its own clock says,
    /// and a chunk not there by then restarts its timeline (the rooms hear a jump), so this is the slack for a late
    /// wake-up of the sink's thread; what was sent ahead is also heard after a pause.
    static let aheadNanoseconds: UInt64 = 30_000_000

    /// `Snapcast (tcp://HOST:PORT, RATE Hz)`.
    public var name: String { "Snapcast (\(address), \(sampleRate) Hz)" }
    /// The source's rate: every item is played at it.
    public var outputSampleRate: Int? { sampleRate }
    /// False: what was sent to the server is heard, and nothing sits in the sink to throw away.
    public var flushDropsUnplayedFrames: Bool { false }

    /// True: the rooms play on through Snapcast's buffer after a pause.
    public var playsOutWhilePaused: Bool { true }

    private var address: String { host.contains(":") ? "tcp://[\(host)]:\(port)" : "tcp://\(host):\(port)" }

    private let connection = Mutex<PCMSocket?>(nil)
    private let thread = SinkThread<Stream>()
    private let failureHandler = Mutex<(@Sendable (AudioSinkError) -> Void)?>(nil)
    private let timingHandler = Mutex<@Sendable () -> Void>({})
    private let schedule: PlayoutSchedule
    /// Set by a flush: the next frames sent are new audio, whose first hearing is told to the timing handler.
    private let flushed = Atomic<Bool>(false)
    private let isPaused = Atomic<Bool>(false)

    private struct Stream {
        var renderer: Renderer
        /// The frames rendered when the thread started: heard, until the schedule says more.
        var startFrames: Int
    }

    /// A sink for the snapserver source at `host` and `port` (snapserver's usual tcp source port is 4953) whose
    /// sample format is `sampleRate`:16:2 and whose server's `buffer` is `bufferMilliseconds` (snapserver's default
    /// is 1000). Connects when playback starts; a server that is not there yet is waited for, as the engine
    /// reconnects.
    public init(host: String, port: Int = 4953, sampleRate: Int = 48_000, bufferMilliseconds: Int = 1_000) {
        self.host = host
        self.port = port
        self.sampleRate = sampleRate
        self.bufferMilliseconds = bufferMilliseconds
        periodFrames = sampleRate / 50
        schedule = PlayoutSchedule(sampleRate: sampleRate)
    }

    /// Connects if need be, then starts the thread that sends what `renderer` renders (parked from the start when
    /// `paused`). Throws when no server answers, or when `format` is not the source's.
    public func start(format: AudioFormat, renderer: Renderer, paused: Bool) throws(AudioSinkError) {
        stop()
        guard format.sampleRate == sampleRate, format.channelCount == Renderer.channelCount else {
            throw AudioSinkError(
                .streamFailed, reason: "the Snapcast source at \(address) takes \(sampleRate):16:2, not \(format)",
                suggestion: "this is a bug in QueuePlayer: items are resampled to the source's rate")
        }
        let socket = try connectedSocket()
        isPaused.store(paused, ordering: .releasing)
        let stream = Stream(renderer: renderer, startFrames: renderer.position.read().sinkFrames)
        let timing = timingHandler.withLock { $0 }
        thread.start(name: "QP snapcast", realTime: true, stream: stream) { [self] generation in
            let sent = send(from: renderer, socket: socket, timing: timing, generation: generation)
            if !sent { lose(socket) }
        }
    }

    /// Stops sending (true) or sends again (false); a pause first sends the runout of silence. The rooms play on
    /// through what they hold.
    public func setPaused(_ paused: Bool) {
        isPaused.store(paused, ordering: .releasing)
        thread.wake.signal()
    }

    /// Drops nothing (what was sent is the server's, and the sink holds nothing unsent), but notes that the next
    /// frames are new audio, so that the moment the rooms start to hear them is told.
    public func flush() {
        flushed.store(true, ordering: .releasing)
    }

    /// Waits until the rooms have played everything up to the end of the stream. Throws if the connection is lost
    /// before it was all sent.
    public func drain() throws(AudioSinkError) {
        while let renderer = thread.current?.renderer {
            guard renderer.hasRenderedEverything, thread.isAtEndOfStream.load(ordering: .acquiring) else {
                _ = thread.reachedEnd.wait(timeout: .now() + .milliseconds(100))
                continue
            }
            let unheard = latencyFrames()
            if unheard == 0 { return }
            let untilHeard = DeviceClock.nanoseconds(for: unheard, rate: sampleRate)
            _ = thread.reachedEnd.wait(timeout: .now() + .nanoseconds(Int(min(untilHeard, 100_000_000))))
        }
        if connection.withLock({ $0 == nil }) {
            throw disconnected(reason: "the connection closed before the last frames were sent")
        }
    }

    /// Wakes the sink's thread after the renderer reported the end of the stream.
    public func resumeAfterEndOfStream() {
        thread.wake.signal()
    }

    /// The frames rendered that the rooms have not yet played. Any thread but the sink's.
    public func latencyFrames() -> Int {
        guard let stream = thread.current else { return 0 }
        let rendered = stream.renderer.position.read().sinkFrames
        let heard = schedule.heardFrames(by: DispatchTime.now().uptimeNanoseconds) ?? stream.startFrames
        return max(0, rendered - heard)
    }

    /// Stops the sink's thread and waits until it has exited. The connection stays open for the next stream.
    public func stop() {
        thread.stop()
    }

    /// Connects to the source unless connected; throws ``AudioSinkError/Code/serverUnreachable`` naming the
    /// address and the source line snapserver needs.
    public func reconnect() throws(AudioSinkError) {
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

    /// Sets the closure told when the rooms start to hear frames after hearing none (a start, a resume, a seek),
    /// which the sink's latency alone cannot show ahead. Applies from the next start.
    public func setTimingHandler(_ handler: @escaping @Sendable () -> Void) {
        timingHandler.withLock { $0 = handler }
    }

    /// Sets the closure told when the connection is lost during playback.
    public func setFailureHandler(_ handler: @escaping @Sendable (AudioSinkError) -> Void) {
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
    /// Records when the rooms hear each period, and tells `timing` when they start to hear new frames.
    private func send(
        from renderer: Renderer, socket: PCMSocket, timing: @Sendable () -> Void, generation myGeneration: Int
    ) -> Bool {
        var buffer = [Int16](repeating: 0, count: periodFrames * Renderer.channelCount)
        var pacer = Pacer(periodFrames: periodFrames, sampleRate: sampleRate)
        var runoutLeft = 0
        let delay = UInt64(bufferMilliseconds) * 1_000_000
        /// When the rooms start to hear the latest new frames, still to be told; 0 when there is nothing to tell.
        var announceAt: UInt64 = 0
        while thread.isCurrent(myGeneration) {
            if announceAt != 0, DispatchTime.now().uptimeNanoseconds >= announceAt {
                announceAt = 0
                timing()
            }
            let paused = isPaused.load(ordering: .acquiring)
            if paused, runoutLeft == 0 {
                pacer.stop()
                park(until: announceAt)
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
                let announcement = DispatchTime(uptimeNanoseconds: announceAt)
                _ = thread.wake.wait(timeout: announceAt == 0 ? due : min(due, announcement))
                continue
            }
            var frameCount = 0
            var ended = false
            if paused {
                runoutLeft -= 1
            } else {
                thread.isAtEndOfStream.store(false, ordering: .releasing)
                let result = buffer.withUnsafeMutableBufferPointer { pointer in
                    var span = pointer.mutableSpan
                    return renderer.render(into: &span, underrun: .padWithSilence)
                }
                frameCount = result.frameCount
                ended = result.reachedEndOfStream
                runoutLeft = ended ? max(0, runoutLeft - 1) : Self.runoutPeriods
                if frameCount > 0 {
                    let end = renderer.position.read().sinkFrames
                    let heardFrom = pacer.nextSlot + delay
                    let startsRun = schedule.record((end - frameCount)..<end, heardFrom: heardFrom)
                    if startsRun || flushed.exchange(false, ordering: .acquiringAndReleasing) {
                        announceAt = heardFrom
                    }
                }
            }
            if ended, frameCount == 0, runoutLeft == 0 {
                pacer.stop()
                thread.isAtEndOfStream.store(true, ordering: .releasing)
                thread.reachedEnd.signal()
                park(until: announceAt)
                continue
            }
            for index in (frameCount * Renderer.channelCount)..<buffer.count { buffer[index] = 0 }
            for index in buffer.indices { buffer[index] = buffer[index].littleEndian }
            guard buffer.withUnsafeBytes({ socket.send($0) }) else { return false }
            pacer.sent()
        }
        return true
    }

    /// Waits to be woken, or until `instant` (uptime nanoseconds) when it is not 0.
    private func park(until instant: UInt64) {
        if instant == 0 {
            thread.wake.wait()
        } else {
            _ = thread.wake.wait(timeout: DispatchTime(uptimeNanoseconds: instant))
        }
    }
}

/// When the sink's thread sends its next period: `SnapcastSink.aheadNanoseconds` ahead of its place in the
/// timeline that starts at the first send after a stop (at once while that is still to come).
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
        let slot = periodsSent * periodNanoseconds
        let ahead = SnapcastSink.aheadNanoseconds
        return DispatchTime(uptimeNanoseconds: anchor + (slot > ahead ? slot - ahead : 0))
    }

    /// The instant of the next period's place in the timeline (its first frame's, were it played now). Only
    /// while ``due()`` is not nil.
    var nextSlot: UInt64 { anchor + periodsSent * periodNanoseconds }

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

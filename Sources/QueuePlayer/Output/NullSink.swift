import Dispatch
import Synchronization

/// A sink that plays to nowhere, on its own thread: in real time (like a sound card) or as fast as the queue can be
/// decoded. Tests use it to play minutes of audio in milliseconds and to record exactly what was rendered.
///
/// In real time it keeps time like a sound card: its thread renders ``periodFrames`` a call, each when the period
/// before has been played, and between renders the frames it holds are played at the item's rate by a clock that
/// stops while paused or run dry; the latency is what that clock has not played yet, so the heard position
/// moves with time, not in steps of a period. Unpaced, a frame counts as heard once rendered (and recorded). Either
/// way a frame never counts as heard before the recording holds it. The thread renders into a buffer allocated once
/// at start, and keeps its clock in atomics, so the render loop allocates nothing and takes no lock. In real time the
/// thread runs at real-time priority where the process may have it, as a sound card's would.
public final class NullSink: AudioSink {
    /// How the sink's thread keeps time.
    public enum Pacing: Sendable, Equatable {
        /// One period every `periodFrames / sampleRate` seconds, like a sound card.
        case realTime
        /// As fast as the queue is decoded.
        case unpaced
    }

    /// Real time or as fast as possible; fixed at init.
    public let pacing: Pacing
    /// Frames rendered per call.
    public let periodFrames: Int
    /// `null sink (real time)` or `null sink (unpaced)`.
    public var name: String { pacing == .realTime ? "null sink (real time)" : "null sink (unpaced)" }
    /// The one rate every item plays at, as a sound server's sink has; nil (the default): each item's own rate.
    public let outputSampleRate: Int?
    /// Real time: the default ring, as for a sound server. Unpaced: 262,144 frames (about 6 s at 44.1 kHz; 2 MiB),
    /// because the sink's thread drains the ring faster than it is filled and then sleeps until half of it is
    /// written again: each half costs a wake-up across CPUs, and with the default ring those wake-ups took 12% of
    /// a 600 s unpaced decode (BENCHMARKS.md).
    public var decodeAheadFrames: Int { pacing == .unpaced ? 262_144 : Renderer.defaultBufferFrames }

    private let recording: SampleRing?
    private let thread = SinkThread<Stream>()
    private let isPaused = Atomic<Bool>(false)
    /// Frames handed over by the render in progress and not yet recorded: the sink's latency, so that nothing counts
    /// as heard before the recording holds it.
    private let framesInFlight = Atomic<Int>(0)

    private struct Stream {
        var renderer: Renderer
        /// The real-time clock of this stream (nil unpaced).
        var clock: DeviceClock?
    }

    /// Creates a null sink. With `recordingFrames > 0` it also keeps the first `recordingFrames` frames it renders
    /// (rounded up to a power of two), for ``takeRecording()``. With `outputSampleRate`, it plays every item at that
    /// rate, as a sound server would.
    public init(pacing: Pacing, periodFrames: Int = 1024, recordingFrames: Int = 0, outputSampleRate: Int? = nil) {
        self.pacing = pacing
        self.outputSampleRate = outputSampleRate
        self.periodFrames = periodFrames
        recording = recordingFrames > 0 ? SampleRing(minimumCapacity: recordingFrames * Renderer.channelCount) : nil
    }

    /// Stops any previous thread, then starts a thread that renders ``periodFrames`` a call from `renderer` (parked
    /// from the start when `paused`).
    public func start(format: AudioFormat, renderer: Renderer, paused: Bool) throws(AudioSinkError) {
        stop()
        isPaused.store(paused, ordering: .releasing)
        let clock =
            pacing == .realTime
            ? DeviceClock(frames: renderer.position.read().sinkFrames, sampleRate: format.sampleRate) : nil
        if paused { clock?.pause() }
        let stream = Stream(renderer: renderer, clock: clock)
        thread.start(name: "QP null sink", realTime: pacing == .realTime, stream: stream) { [self] generation in
            run(renderer: renderer, clock: clock, generation: generation)
        }
    }

    /// The kernel's id of the thread rendering the current stream (as in /proc/self/task), once it has started; 0
    /// before and after.
    package var renderThreadID: Int32 { thread.threadID.load(ordering: .acquiring) }

    /// Parks the sink thread (true) or wakes it (false). In real time the clock stands at once, holding what it has
    /// not played until play; unpaced, what was rendered counts as heard.
    public func setPaused(_ paused: Bool) {
        let stream = thread.current
        if paused {
            isPaused.store(true, ordering: .releasing)
            stream?.clock?.pause()
        } else {
            stream?.clock?.resume()
            isPaused.store(false, ordering: .releasing)
        }
        thread.wake.signal()
        stream?.renderer.interruptFrameWait()
    }

    /// Does nothing: the null sink holds no frames it has not played.
    public func flush() {}

    /// False: every frame rendered counts as heard.
    public var flushDropsUnplayedFrames: Bool { false }

    /// Waits until the sink thread has rendered (and recorded) everything up to the end of the stream.
    public func drain() throws(AudioSinkError) {
        while let renderer = thread.current?.renderer {
            if renderer.hasRenderedEverything, thread.isAtEndOfStream.load(ordering: .acquiring) { return }
            _ = thread.reachedEnd.wait(timeout: .now() + .milliseconds(100))
        }
    }

    /// Wakes the sink thread after the renderer reported the end of the stream.
    public func resumeAfterEndOfStream() {
        thread.wake.signal()
    }

    /// In real time, the frames handed over that its clock has not played (nor the recording taken). Unpaced, 0
    /// between renders, and during a render that render's frames. Any thread but the sink's.
    public func latencyFrames() -> Int {
        guard pacing == .realTime else { return framesInFlight.load(ordering: .acquiring) }
        guard let stream = thread.current, let clock = stream.clock else { return 0 }
        return max(0, stream.renderer.position.read().sinkFrames - clock.playedFrames())
    }

    /// Stops the sink thread and waits until it has exited, so that no render call follows.
    public func stop() {
        thread.stop { $0.renderer.interruptFrameWait() }
    }

    /// Ignores the handler: the null sink cannot fail.
    public func setFailureHandler(_ handler: @escaping @Sendable (AudioSinkError) -> Void) {}

    /// Never disconnected: does nothing.
    public func reconnect() throws(AudioSinkError) {}

    /// Returns and forgets the recorded samples (interleaved stereo Float32), in render order.
    public func takeRecording() -> [Float] {
        guard let recording else { return [] }
        var samples: [Float] = []
        samples.reserveCapacity(recording.readableCount)
        recording.read(maximum: .max) { samples.append(contentsOf: $0.withUnsafeBufferPointer { Array($0) }) }
        return samples
    }

    private func run(renderer: Renderer, clock: DeviceClock?, generation myGeneration: Int) {
        var buffer = [Float](repeating: 0, count: periodFrames * Renderer.channelCount)
        var handedOver = renderer.position.read().sinkFrames
        while thread.isCurrent(myGeneration) {
            if isPaused.load(ordering: .acquiring) {
                thread.wake.wait()
                continue
            }
            if let clock {
                // The next period is rendered once the clock has played what was handed over.
                guard let anchor = clock.start() else {
                    // Paused since the look above: the next turn parks. A clock paused under a sink that is not (a
                    // pause and a play, or a start and a play, carried out at once on two threads, each setting one
                    // of the two flags last) would otherwise spin this real-time thread: it runs again.
                    if !isPaused.load(ordering: .acquiring) { clock.resume() }
                    continue
                }
                let due = DispatchTime(
                    uptimeNanoseconds: anchor.nanoseconds
                        + DeviceClock.nanoseconds(for: handedOver - anchor.frames, rate: clock.sampleRate))
                if DispatchTime.now() < due {
                    _ = thread.wake.wait(timeout: due)
                    continue
                }
            }
            thread.isAtEndOfStream.store(false, ordering: .releasing)
            framesInFlight.store(periodFrames, ordering: .releasing)
            let result = buffer.withUnsafeMutableBufferPointer { pointer in
                var span = pointer.mutableSpan
                return renderer.render(into: &span, underrun: pacing == .unpaced ? .stopShort : .padWithSilence)
            }
            record(buffer, frameCount: result.frameCount)
            handedOver = renderer.position.read().sinkFrames
            clock?.handedOver(handedOver)
            framesInFlight.store(0, ordering: .releasing)
            if pacing == .unpaced, result.frameCount == 0, !result.reachedEndOfStream {
                // A batch of half the ring: the decoding thread fills it in several writes, and wakes this thread
                // once (a 300 s decode: 800 wake-ups instead of 3,200). A pause or a stop ends the wait.
                renderer.waitForFrames(minimumFrames: renderer.capacityFrames / 2, timeout: .distantFuture)
                continue
            }
            if result.reachedEndOfStream, result.frameCount == 0 {
                // Run dry, everything handed over played: the clock stands until frames follow.
                clock?.stand()
                thread.isAtEndOfStream.store(true, ordering: .releasing)
                thread.reachedEnd.signal()
                thread.wake.wait()
            }
        }
    }

    /// Copies the first `frameCount` frames of `buffer` into the recording, while it has room. Lock-free.
    private func record(_ buffer: [Float], frameCount: Int) {
        guard let recording else { return }
        let total = frameCount * Renderer.channelCount
        var offset = 0
        while offset < total {
            let written = recording.write { target in
                let count = min(target.count, total - offset)
                for index in 0..<count { target[index] = buffer[offset + index] }
                return count
            }
            guard written > 0 else { return }
            offset += written
        }
    }
}

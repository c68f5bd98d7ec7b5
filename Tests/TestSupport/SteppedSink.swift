import Dispatch
import QueuePlayer
import Synchronization

/// A sink with no thread and no clock of its own: audio time moves only when the test calls
/// ``render(frames:deadline:into:)``, on the test's thread. What it renders is what is heard (latency 0 between
/// calls), so a test knows exactly which frame is audible after every step, and a run depends on nothing but the
/// test's own sequence of calls. Each item plays at its own rate (the stream is drained and reopened at a change).
package final class SteppedSink: AudioSink {
    /// The engine kept the test waiting: it had frames to play by the model and gave none before the deadline.
    package struct Stalled: Error, CustomStringConvertible {
        /// Frames rendered before the deadline.
        package var rendered: Int
        /// Frames the call asked for.
        package var wanted: Int
        /// What the stream was doing at the deadline.
        package var stream: String
        /// The three above, in a sentence.
        package var description: String {
            "the sink got \(rendered) of \(wanted) frames before the deadline (\(stream))"
        }
    }

    /// `stepped sink`.
    package let name = "stepped sink"
    /// Nil: each item plays at its own rate.
    package let outputSampleRate: Int? = nil
    /// False: a flush keeps what was rendered, as it was heard.
    package let flushDropsUnplayedFrames = false

    private struct Stream {
        var renderer: Renderer
        var format: AudioFormat
        var isPaused: Bool
    }

    /// What one render call gave, with the stream it was rendered for.
    private struct Period {
        var result: Renderer.Result
        var sampleRate: Int
        var renderer: Renderer
    }

    private let stream = Mutex<Stream?>(nil)
    /// Signalled whenever the stream starts, stops, pauses, resumes or gets frames after its end.
    private let changed = DispatchSemaphore(value: 0)
    /// Signalled by every flush: the engine carries out each restart by flushing (see `PlaybackEngine`).
    private let flushed = DispatchSemaphore(value: 0)
    private let periodFrames: Int

    /// A sink that renders at most `periodFrames` frames a call into the renderer.
    package init(periodFrames: Int = 1024) {
        self.periodFrames = periodFrames
    }

    package func start(format: AudioFormat, renderer: Renderer, paused: Bool) throws(AudioSinkError) {
        stream.withLock { $0 = Stream(renderer: renderer, format: format, isPaused: paused) }
        changed.signal()
        renderer.interruptFrameWait()
    }

    package func setPaused(_ paused: Bool) {
        let renderer = stream.withLock { stream in
            stream?.isPaused = paused
            return stream?.renderer
        }
        changed.signal()
        renderer?.interruptFrameWait()
    }

    package func flush() { flushed.signal() }

    /// Returns at once: what was rendered was heard, and nothing else was handed over.
    package func drain() throws(AudioSinkError) {}

    package func resumeAfterEndOfStream() { changed.signal() }

    package func latencyFrames() -> Int { 0 }

    package func stop() {
        let renderer = stream.withLock { stream in
            defer { stream = nil }
            return stream?.renderer
        }
        changed.signal()
        renderer?.interruptFrameWait()
    }

    package func reconnect() throws(AudioSinkError) {}

    package func setFailureHandler(_ handler: @escaping @Sendable (AudioSinkError) -> Void) {}

    /// Whether the open stream is paused; nil with no stream open.
    package var streamIsPaused: Bool? { stream.withLock { $0?.isPaused } }

    /// Waits for the next flush, until `deadline`; false if none came.
    package func waitForFlush(until deadline: DispatchTime) -> Bool {
        flushed.wait(timeout: deadline) == .success
    }

    /// Renders exactly `frames` frames, handing each period's interleaved stereo samples and its sample rate to
    /// `body`, waiting as long as the engine has not written them yet (the stream not started, paused, at its end,
    /// or the ring empty). Throws ``Stalled`` if they have not all come by `deadline`. The test's thread only.
    package func render(
        frames: Int, deadline: DispatchTime, into body: (UnsafeBufferPointer<Float>, _ sampleRate: Int) throws -> Void
    ) throws {
        var buffer = [Float](repeating: 0, count: periodFrames * Renderer.channelCount)
        var rendered = 0
        while rendered < frames {
            let wanted = min(periodFrames, frames - rendered)
            // Rendered under the stream's lock, as a sound server renders under its own: the engine opens the stream
            // at an item's new rate and only then writes that item's frames, so frames rendered here are of the
            // format read with them.
            let period = stream.withLock { stream -> Period? in
                guard let stream, !stream.isPaused else { return nil }
                let result = buffer.withUnsafeMutableBufferPointer { pointer in
                    let period = UnsafeMutableBufferPointer(rebasing: pointer[0..<(wanted * Renderer.channelCount)])
                    var span = period.mutableSpan
                    return stream.renderer.render(into: &span, underrun: .stopShort)
                }
                return Period(result: result, sampleRate: stream.format.sampleRate, renderer: stream.renderer)
            }
            guard let period else {
                guard changed.wait(timeout: deadline) == .success else {
                    throw Stalled(rendered: rendered, wanted: frames, stream: describeStream())
                }
                continue
            }
            let result = period.result
            if result.frameCount > 0 {
                try buffer.withUnsafeBufferPointer { pointer in
                    let count = result.frameCount * Renderer.channelCount
                    let samples = UnsafeBufferPointer(rebasing: pointer[0..<count])
                    try body(samples, period.sampleRate)
                }
                rendered += result.frameCount
            }
            guard result.frameCount == 0 else { continue }
            if result.reachedEndOfStream {
                // Until frames follow the end, the stream is restarted or stopped: each of these signals.
                _ = changed.wait(timeout: deadline)
            } else {
                // Frames written, the end marked, or the stream stopped, paused or restarted end the wait.
                period.renderer.waitForFrames(timeout: deadline)
            }
            guard DispatchTime.now() < deadline else {
                throw Stalled(rendered: rendered, wanted: frames, stream: describeStream())
            }
        }
    }

    /// Renders exactly `frames` frames as ``render(frames:deadline:into:)`` does, within 10 s, and returns their
    /// interleaved samples. The test's thread only.
    package func renderAll(frames: Int) throws -> [Float] {
        var samples: [Float] = []
        samples.reserveCapacity(frames * Renderer.channelCount)
        try render(frames: frames, deadline: .now() + 10) { period, _ in samples += period }
        return samples
    }

    private func describeStream() -> String {
        stream.withLock { stream in
            guard let stream else { return "no stream open" }
            return "stream at \(stream.format.sampleRate) Hz, \(stream.isPaused ? "paused" : "playing")"
        }
    }
}

import Dispatch
import Foundation
import QueuePlayer
import Synchronization

/// A sink written as a user of the library writes one, with its public API alone: Tests/OutsideClient, a package that
/// depends on this one by path and where nothing `package` is visible, builds this file (through a link) and plays
/// through it (`scripts/api check`). It renders as fast as it is given frames, on a thread of its own, and keeps
/// every sample. Not a real-time sink: it takes a lock between renders, which one with a device's deadline must not
/// (see ``AudioSink``).
final class RecordingSink: AudioSink {
    let name = "recording sink"
    let outputSampleRate: Int? = nil

    private struct Stream {
        let renderer: Renderer
        var isPaused: Bool
    }

    private let stream = Mutex<Stream?>(nil)
    private let samples = Mutex<[Float]>([])
    /// Signalled by a pause's end, a resume after the end of the stream, and a stop.
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled by the thread at each end of the stream it reaches.
    private let reachedEnd = DispatchSemaphore(value: 0)
    /// Signalled by the thread as it exits; one thread runs per stream started.
    private let exited = DispatchSemaphore(value: 0)

    /// The samples rendered so far, interleaved stereo, in order.
    var recording: [Float] { samples.withLock { $0 } }

    func start(format: AudioFormat, renderer: Renderer, paused: Bool) throws(AudioSinkError) {
        stream.withLock { $0 = Stream(renderer: renderer, isPaused: paused) }
        Thread { [self] in
            render(from: renderer)
            exited.signal()
        }.start()
    }

    private func render(from renderer: Renderer) {
        var buffer = [Float](repeating: 0, count: 4096 * Renderer.channelCount)
        while let current = stream.withLock({ $0 }), current.renderer === renderer {
            if current.isPaused {
                wake.wait()
                continue
            }
            let result = buffer.withUnsafeMutableBufferPointer { pointer in
                var span = pointer.mutableSpan
                return renderer.render(into: &span, underrun: .stopShort)
            }
            samples.withLock { $0 += buffer[0..<result.frameCount * Renderer.channelCount] }
            if result.reachedEndOfStream {
                reachedEnd.signal()
                wake.wait()
            } else if result.frameCount == 0 {
                renderer.waitForFrames(timeout: .distantFuture)
            }
        }
    }

    func setPaused(_ paused: Bool) {
        let renderer = stream.withLock { stream -> Renderer? in
            stream?.isPaused = paused
            return stream?.renderer
        }
        renderer?.interruptFrameWait()
        wake.signal()
    }

    func flush() {}

    var flushDropsUnplayedFrames: Bool { false }

    func drain() throws(AudioSinkError) {
        while let renderer = stream.withLock({ $0?.renderer }), !renderer.hasRenderedEverything {
            reachedEnd.wait()
        }
    }

    func resumeAfterEndOfStream() {
        wake.signal()
    }

    /// Every frame rendered counts as heard.
    func latencyFrames() -> Int { 0 }

    func stop() {
        guard let renderer = stream.withLock({ $0.take()?.renderer }) else { return }
        renderer.interruptFrameWait()
        wake.signal()
        exited.wait()
    }

    func reconnect() throws(AudioSinkError) {}

    func setFailureHandler(_ handler: @escaping @Sendable (AudioSinkError) -> Void) {}
}

import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

@Suite("Renderer: the one render path every sink shares", .tier(.deterministic))
struct RendererTests {
    /// Writes `frames` frames into the renderer, each sample valued by its frame index, and returns the values.
    @discardableResult
    private func write(_ renderer: Renderer, frames: Int, startingAt first: Int = 0) -> [Float] {
        let values = (0..<frames * 2).map { Float(first + $0 / 2) / 65_536 }
        var offset = 0
        while offset < values.count {
            offset +=
                renderer.write { span in
                    let count = min(span.count, values.count - offset) / 2
                    for index in 0..<count * 2 { span[index] = values[offset + index] }
                    return count
                } * 2
        }
        return values
    }

    private func render<Sample: PCMSample>(
        _ renderer: Renderer, frames: Int, as _: Sample.Type, underrun: Renderer.UnderrunPolicy = .padWithSilence
    ) -> ([Sample], Renderer.Result) {
        var buffer = [Sample](repeating: Sample(decoded: 0.999), count: frames * 2)
        let result = buffer.withUnsafeMutableBufferPointer { pointer in
            var span = pointer.mutableSpan
            return renderer.render(into: &span, underrun: underrun)
        }
        return (buffer, result)
    }

    @Test("16-bit conversion rounds half to even and clamps, as libmpg123 does")
    func int16Conversion() {
        #expect(Int16(decoded: 0.5) == 16_384)
        #expect(Int16(decoded: -1.0) == -32_768)
        #expect(Int16(decoded: 1.0) == 32_767)
        #expect(Int16(decoded: 1.7) == 32_767)
        #expect(Int16(decoded: -3) == -32_768)
        #expect(Int16(decoded: 0.5 / 32_768) == 0)
        #expect(Int16(decoded: 1.5 / 32_768) == 2)
        #expect(Int16(decoded: -2.5 / 32_768) == -2)
        #expect(Int16(decoded: .nan) == 32_767)
    }

    @Test("16-bit conversion equals rounding half to even then clamping, at every tie and integer from -1.25 to 1.25")
    func int16ConversionAgainstReference() {
        func reference(_ decoded: Float) -> Int16 {
            let scaled = (decoded * 32768).rounded(.toNearestOrEven)
            return scaled >= 32767 ? .max : (scaled <= -32768 ? .min : Int16(scaled))
        }
        // Each half step of the 16-bit scale (every tie and every integer, past both bounds) and the Floats either
        // side of it: where a rounding that is not half to even, or a clamp in the wrong place, would differ.
        var mismatches: [Float] = []
        for halfStep in -81_920...81_920 {
            let point = Float(halfStep) / 65_536
            for value in [point.nextDown, point, point.nextUp] where Int16(decoded: value) != reference(value) {
                mismatches.append(value)
            }
        }
        #expect(mismatches.isEmpty)
    }

    @Test("frames come out in order and exactly once, across the ring's wrap-around")
    func framesInOrder() {
        let renderer = Renderer(bufferFrames: 1024)
        var expected: [Float] = []
        var rendered: [Float] = []
        for round in 0..<10 {
            expected += write(renderer, frames: 700, startingAt: round * 700)
            let (samples, result) = render(renderer, frames: 700, as: Float.self)
            #expect(result == .init(frameCount: 700, queuedFrameCount: 700, reachedEndOfStream: false))
            rendered += samples
        }
        #expect(rendered == expected)
        #expect(renderer.position.read().ringFrames == 7000)
        #expect(renderer.underrunFrameCount == 0)
    }

    @Test("an underrun is padded with silence and counted; the end of the stream is not padded")
    func underrunAndEnd() {
        let renderer = Renderer(bufferFrames: 1024)
        write(renderer, frames: 100)
        let (samples, result) = render(renderer, frames: 256, as: Int16.self)
        #expect(result == .init(frameCount: 256, queuedFrameCount: 100, reachedEndOfStream: false))
        #expect(samples[200...].allSatisfy { $0 == 0 })
        #expect(renderer.underrunFrameCount == 156)

        write(renderer, frames: 50, startingAt: 100)
        renderer.markEndOfStream()
        let (_, ended) = render(renderer, frames: 256, as: Int16.self)
        #expect(
            ended == .init(frameCount: 50, queuedFrameCount: 50, reachedEndOfStream: true, endOfStreamIsFinal: true))
        #expect(renderer.underrunFrameCount == 156)
        #expect(renderer.hasRenderedEverything)
    }

    @Test("frames written holding the end are rendered and then stop short; once the stream continues, a dry ring pads")
    func heldEndOfStream() {
        let renderer = Renderer(bufferFrames: 1024)
        renderer.markEndOfStream()
        func writeHolding(frames: Int) -> Int {
            renderer.write(holdingEndOfStream: true) { span in
                for index in 0..<frames * 2 { span[index] = 0.25 }
                return frames
            }
        }
        #expect(writeHolding(frames: 100) == 100)
        let (_, held) = render(renderer, frames: 256, as: Float.self)
        #expect(held == .init(frameCount: 100, queuedFrameCount: 100, reachedEndOfStream: true))
        #expect(renderer.underrunFrameCount == 0)

        #expect(writeHolding(frames: 10) == 10)
        renderer.continueStream()
        let (_, continued) = render(renderer, frames: 64, as: Float.self)
        #expect(continued == .init(frameCount: 64, queuedFrameCount: 10, reachedEndOfStream: false))
        #expect(renderer.underrunFrameCount == 54)
    }

    @Test("only an end the producer marked as final says so: not a stream's start, nor the end before a restart")
    func finalEndOfStream() {
        let renderer = Renderer(bufferFrames: 1024)
        let (_, start) = render(renderer, frames: 64, as: Float.self)
        #expect(start == .init(frameCount: 0, queuedFrameCount: 0, reachedEndOfStream: true))
        write(renderer, frames: 100)
        renderer.markEndOfStream(beforeRestart: true)
        let (_, restart) = render(renderer, frames: 256, as: Float.self)
        #expect(restart == .init(frameCount: 100, queuedFrameCount: 100, reachedEndOfStream: true))
        write(renderer, frames: 10, startingAt: 100)
        renderer.markEndOfStream()
        let (_, final) = render(renderer, frames: 256, as: Float.self)
        #expect(
            final == .init(frameCount: 10, queuedFrameCount: 10, reachedEndOfStream: true, endOfStreamIsFinal: true))
    }

    @Test("stopping short on an underrun writes no silence")
    func stopShort() {
        let renderer = Renderer(bufferFrames: 1024)
        write(renderer, frames: 10)
        let (_, result) = render(renderer, frames: 64, as: Float.self, underrun: .stopShort)
        #expect(result == .init(frameCount: 10, queuedFrameCount: 10, reachedEndOfStream: false))
        #expect(renderer.underrunFrameCount == 0)
    }

    @Test("a discard drops what was written before it, and nothing after it")
    func discard() {
        let renderer = Renderer(bufferFrames: 1024)
        write(renderer, frames: 300)
        renderer.discardWrittenFrames()
        let fresh = write(renderer, frames: 20, startingAt: 5000)
        let (samples, result) = render(renderer, frames: 20, as: Float.self)
        #expect(result.queuedFrameCount == 20)
        #expect(samples == fresh)
    }

    @Test("a discard that continues the old audio skips what was rendered past the continued frame meanwhile")
    func continuingDiscardSkipsWhatWasHeard() {
        // Frames 0..<400 are written; an edit continues the item at frame 100, but before the discard is taken up
        // the sink renders through frame 250. The new audio (frames 100... again) must then go on at 250.
        let renderer = Renderer(bufferFrames: 1024)
        write(renderer, frames: 400)
        let (heard, _) = render(renderer, frames: 250, as: Float.self)
        renderer.discardWrittenFrames(continuing: 100)
        write(renderer, frames: 40, startingAt: 100)
        let (skipping, skippingResult) = render(renderer, frames: 10, as: Float.self, underrun: .stopShort)
        #expect(skippingResult.queuedFrameCount == 0)
        #expect(skipping.allSatisfy { $0 == 0.999 })
        let continued = write(renderer, frames: 300, startingAt: 140)
        let (after, _) = render(renderer, frames: 100, as: Float.self)
        #expect(heard.last == Float(249) / 65_536)
        #expect(after == Array(continued[(250 - 140) * 2..<(350 - 140) * 2]))
    }

    @Test("a continuation written short of what was heard stops the render as at an end, and no silence is padded")
    func continuationShortOfWhatWasHeard() {
        // Frames 0..<400 are written and 250 heard; an edit marks the end, discards, and continues at frame 100.
        // Its first write (frames 100..<140, all the ring had room for) ends the mark, but all of it was heard: a
        // real-time render must wait for frame 250, not fill the wait with silence inside the item.
        let renderer = Renderer(bufferFrames: 1024)
        write(renderer, frames: 400)
        _ = render(renderer, frames: 250, as: Float.self)
        renderer.markEndOfStream()
        renderer.discardWrittenFrames(continuing: 100)
        write(renderer, frames: 40, startingAt: 100)
        #expect(!renderer.takeAwaitedContinuation())
        let (_, waiting) = render(renderer, frames: 64, as: Float.self)
        #expect(waiting == .init(frameCount: 0, queuedFrameCount: 0, reachedEndOfStream: true))
        #expect(renderer.underrunFrameCount == 0)
        #expect(!renderer.hasRenderedEverything)
        let continued = write(renderer, frames: 300, startingAt: 140)
        #expect(renderer.takeAwaitedContinuation())
        #expect(!renderer.takeAwaitedContinuation())
        let (after, result) = render(renderer, frames: 100, as: Float.self)
        #expect(result == .init(frameCount: 100, queuedFrameCount: 100, reachedEndOfStream: false))
        #expect(after == Array(continued[(250 - 140) * 2..<(350 - 140) * 2]))
        // Once past the skip, a ring that runs dry is an underrun again.
        _ = render(renderer, frames: 100, as: Float.self)
        #expect(renderer.underrunFrameCount == 10)
    }

    @Test("on a sink whose flush drops unplayed frames, the continuation starts at the frame heard at the flush")
    func continuingDiscardAfterFlush() {
        let renderer = Renderer(bufferFrames: 1024)
        write(renderer, frames: 400)
        _ = render(renderer, frames: 300, as: Float.self)
        renderer.discardWrittenFrames(continuing: 100, heardThroughFrame: 120)
        let fresh = write(renderer, frames: 200, startingAt: 100)
        let (samples, _) = render(renderer, frames: 50, as: Float.self)
        #expect(samples == Array(fresh[40..<140]))
    }

    @Test("a cut takes back what was written past a frame no render can reach, and the next write follows it")
    func cutBeyondTheRenders() {
        let renderer = Renderer(bufferFrames: 1024)
        let old = write(renderer, frames: 400)
        let (first, _) = render(renderer, frames: 100, as: Float.self)
        #expect(renderer.truncate(atRingFrame: 300))
        #expect(renderer.producedFrames == 300)
        let new = write(renderer, frames: 50, startingAt: 1_000)
        let (rest, result) = render(renderer, frames: 250, as: Float.self)
        #expect(result.queuedFrameCount == 250)
        #expect(first + rest == Array(old[..<600]) + new)
        #expect(renderer.truncate(atRingFrame: 350), "nothing was written past the end: nothing to take back")
    }

    @Test("a cut the last render could reach (from where it started, as far as it asked) is refused; beyond, done")
    func cutWithinReach() {
        let renderer = Renderer(bufferFrames: 1024)
        write(renderer, frames: 100)
        _ = render(renderer, frames: 300, as: Float.self)
        let later = write(renderer, frames: 300, startingAt: 100)
        #expect(!renderer.truncate(atRingFrame: 299))
        #expect(renderer.producedFrames == 400)
        #expect(renderer.truncate(atRingFrame: 300), "only a render that started at frame 0 asked for 300 frames")
        let new = write(renderer, frames: 50, startingAt: 1_000)
        let (rest, _) = render(renderer, frames: 250, as: Float.self)
        #expect(rest == Array(later[..<400]) + new)
    }

    @Test("a cut is refused while a discard is not taken up, or its skip goes past the frame")
    func cutBesideADiscard() {
        let renderer = Renderer(bufferFrames: 1024)
        write(renderer, frames: 400)
        _ = render(renderer, frames: 10, as: Float.self)
        renderer.discardWrittenFrames(continuing: 5)
        write(renderer, frames: 300, startingAt: 5)
        #expect(!renderer.truncate(atRingFrame: 600), "the discard is not taken up")
        _ = render(renderer, frames: 10, as: Float.self)
        // Taken up: the render skipped to frame 405 of the ring (400 + what it had played past frame 5).
        #expect(!renderer.truncate(atRingFrame: 404), "the skip goes past the frame")
        #expect(renderer.truncate(atRingFrame: 600))
    }

    @Test("the audible frame subtracts the sink's latency, and silence after the last frame is not counted")
    func audibleFrame() {
        let renderer = Renderer(bufferFrames: 1024)
        write(renderer, frames: 100)
        _ = render(renderer, frames: 160, as: Int16.self)
        let position = renderer.position.read()
        #expect(
            position == .init(sinkFrames: 160, ringFrames: 100, sinkFramesAtLastRingFrame: 100, ringFramesHanded: 100))
        #expect(position.audibleRingFrame(latencyFrames: 0) == 100)
        #expect(position.audibleRingFrame(latencyFrames: 60) == 100)
        #expect(position.audibleRingFrame(latencyFrames: 90) == 70)
        #expect(position.audibleRingFrame(latencyFrames: 500) == 0)
    }

    @Test("the frame heard through a flush counts back from the last frame handed over, not from a discard's skip")
    func frameHeardThroughAFlush() {
        let renderer = Renderer(bufferFrames: 1024)
        write(renderer, frames: 100)
        _ = render(renderer, frames: 80, as: Int16.self)
        renderer.markEndOfStream(beforeRestart: true)
        renderer.discardWrittenFrames(continuing: 50)
        let (_, afterDiscard) = render(renderer, frames: 80, as: Int16.self)
        #expect(afterDiscard.frameCount == 0)
        let position = renderer.position.read()
        #expect(position.ringFrames == 100, "the discard skipped what was written")
        #expect(position.ringFrameHeard(droppedFrames: 30) == 50)
        #expect(position.ringFrameHeard(droppedFrames: 0) == 80)
    }

    @Test("the gain scales every sample exactly; 1 changes nothing; 0 is silence")
    func gain() {
        let renderer = Renderer(bufferFrames: 1024)
        let values = write(renderer, frames: 300)
        renderer.gain = 0.5
        let (halved, _) = render(renderer, frames: 100, as: Float.self)
        #expect(halved == values[0..<200].map { $0 * 0.5 })
        renderer.gain = 1
        let (same, _) = render(renderer, frames: 100, as: Float.self)
        #expect(same == Array(values[200..<400]))
        renderer.gain = 0
        let (silent, _) = render(renderer, frames: 100, as: Int16.self)
        #expect(silent.allSatisfy { $0 == 0 })
    }
}

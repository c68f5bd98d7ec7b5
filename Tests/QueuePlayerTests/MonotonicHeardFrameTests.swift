import TestTiers
import Testing

@testable import QueuePlayer

@Suite("The frame heard on a sound server never moves back while the stream plays", .tier(.deterministic))
struct MonotonicHeardFrameTests {
    /// A report at 44.1 kHz with 2 s written, of which `read` frames were read, none left in the sink.
    private func report(read: Int64, advancing: Bool = true) -> StreamTimingReport {
        StreamTimingReport(writtenFrames: 88_200, readFrames: read, sinkMicroseconds: 0, isAdvancing: advancing)
    }

    @Test("a report carried forward moves on in real time, and its sink's latency is still to be heard")
    func carriedForward() {
        var heard = MonotonicHeardFrame()
        #expect(heard.latencyFrames(report(read: 44_100), reportAgeMicroseconds: 100_000, rate: 44_100) == 39_690)
        let inSink = StreamTimingReport(
            writtenFrames: 88_200, readFrames: 44_100, sinkMicroseconds: 50_000, isAdvancing: true)
        heard.reset()
        #expect(heard.latencyFrames(inSink, reportAgeMicroseconds: 0, rate: 44_100) == 46_305)
    }

    @Test("a report that read less than the last one implied holds the time until the sound catches up")
    func standsUntilCaughtUp() {
        var heard = MonotonicHeardFrame()
        // 100 ms after the first report, 48,510 frames were taken as heard; the stream then ran dry at 46,000.
        #expect(heard.latencyFrames(report(read: 44_100), reportAgeMicroseconds: 100_000, rate: 44_100) == 39_690)
        let dry = report(read: 46_000, advancing: false)
        #expect(heard.latencyFrames(dry, reportAgeMicroseconds: 0, rate: 44_100) == 39_690)
        #expect(heard.latencyFrames(dry, reportAgeMicroseconds: 300_000, rate: 44_100) == 39_690)
        // Playing again and past it, the time moves on from the report.
        #expect(heard.latencyFrames(report(read: 50_000), reportAgeMicroseconds: 0, rate: 44_100) == 38_200)
    }

    @Test("after a cork, an uncork or a flush (a reset), the next report is taken as it is")
    func resetTakesTheReport() {
        var heard = MonotonicHeardFrame()
        #expect(heard.latencyFrames(report(read: 44_100), reportAgeMicroseconds: 100_000, rate: 44_100) == 39_690)
        heard.reset()
        #expect(heard.latencyFrames(report(read: 46_000), reportAgeMicroseconds: 0, rate: 44_100) == 42_200)
    }

    @Test("the listener is never taken to be past what was written")
    func neverPastWritten() {
        var heard = MonotonicHeardFrame()
        #expect(heard.latencyFrames(report(read: 88_000), reportAgeMicroseconds: 1_000_000, rate: 44_100) == 0)
    }
}

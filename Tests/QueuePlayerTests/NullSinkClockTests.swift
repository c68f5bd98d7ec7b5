import Dispatch
import TestSupport
import Testing

@testable import QueuePlayer

/// What one periodic observer call reported, and when it ran.
private struct Tick: Sendable {
    var arrivedNanoseconds: UInt64
    var time: MediaTime
}

@Suite("The real-time NullSink keeps time like a sound card")
struct NullSinkClockTests {
    @Test("10 ms ticks arrive when their time is heard: lateness median <= 1 ms, p99 <= 3 ms, few bunched")
    func tickLateness() async throws {
        let engine = PlaybackEngine(sink: NullSink(pacing: .realTime), logger: quietLogger)
        let ticks = Collected<Tick>()
        _ = engine.addPeriodicTimeObserver(forInterval: MediaTime(value: 10, timescale: 1000), queue: ticks.queue) {
            ticks.append(Tick(arrivedNanoseconds: DispatchTime.now().uptimeNanoseconds, time: $0))
        }
        engine.enqueue([Fixtures.mp3("stereo-44k-5s")])
        engine.play()
        for await event in engine.events where event == .queueFinished { break }
        let heard = ticks.values
        engine.shutdown()

        // Lateness against the earliest tick: how much later than it each one ran, less the audio between them.
        let offsets = heard.map { Double($0.arrivedNanoseconds) / 1e6 - $0.time.seconds * 1000 }
        let earliest = try #require(offsets.min())
        let lateness = offsets.map { $0 - earliest }.sorted()
        let median = lateness[lateness.count / 2]
        let p99 = lateness[lateness.count * 99 / 100]
        print("null sink, 10 ms ticks: \(heard.count), lateness median \(median) ms, p99 \(p99) ms")
        #expect(heard.count == 500)
        #expect(median <= 1, "median lateness \(median) ms")
        #expect(p99 <= 3, "p99 lateness \(p99) ms")
        // An observer that reacts to a tick does so before the next one arrives. Stepping a period at a time, 80% of
        // the ticks came less than 2 ms after the one before; a stall of the test process (42 ms, measured in a
        // run of the whole suite) bunches 5.
        let gaps = zip(heard.dropFirst(), heard).map { Double($0.arrivedNanoseconds - $1.arrivedNanoseconds) / 1e6 }
        let bunched = gaps.filter { $0 < 5 }.count
        #expect(bunched <= gaps.count / 20, "\(bunched) ticks came less than 5 ms after the one before")
    }

    @Test("frames and nanoseconds convert without overflow at any uptime")
    func conversions() {
        #expect(DeviceClock.frames(in: 1_000_000_000, rate: 44_100) == 44_100)
        #expect(DeviceClock.nanoseconds(for: 44_100, rate: 44_100) == 1_000_000_000)
        let year: UInt64 = 365 * 86_400 * 1_000_000_000
        #expect(DeviceClock.frames(in: year, rate: 48_000) == 365 * 86_400 * 48_000)
        #expect(DeviceClock.nanoseconds(for: 365 * 86_400 * 48_000, rate: 48_000) == year)
    }
}

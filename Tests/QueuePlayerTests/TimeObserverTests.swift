import Dispatch
import Foundation
import Logging
import Synchronization
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// Collects what observers report, in order, from blocks run on its one serial queue.
final class Collected<Element: Sendable>: Sendable {
    let queue = DispatchQueue(label: "collected")
    private let elements = Mutex<[Element]>([])

    func append(_ element: Element) { elements.withLock { $0.append(element) } }

    /// What was reported so far, once every block queued before now has run.
    var values: [Element] {
        queue.sync {}
        return elements.withLock { $0 }
    }
}

/// The times an observer reports.
typealias TimeLog = Collected<MediaTime>

/// Plays `names` on an unpaced NullSink with one periodic observer and returns what it reported.
func observe(_ names: [String], every interval: MediaTime) async -> [MediaTime] {
    let engine = PlaybackEngine(sink: NullSink(pacing: .unpaced), logger: quietLogger)
    let log = TimeLog()
    _ = engine.addPeriodicTimeObserver(forInterval: interval, queue: log.queue) { log.append($0) }
    engine.enqueue(names.map(Fixtures.mp3))
    engine.play()
    for await event in engine.events where event == .queueFinished { break }
    // Read before the shutdown: every call due before the end was queued before the event was posted, and
    // `values` waits for them; the shutdown closes the observers, so calls still queued then are not made.
    let values = log.values
    engine.shutdown()
    return values
}

@Suite("Periodic time observers report item time, frame-exact, in order", .tier(.deterministic))
struct TimeObserverTests {
    let tenMilliseconds = MediaTime(value: 10, timescale: 1000)

    @Test("a 10 ms observer over a 5 s item fires at 0.00, 0.01, ... 4.99, exactly once each")
    func everyTenMilliseconds() async {
        let times = await observe(["stereo-44k-5s"], every: tenMilliseconds)
        #expect(times == (0..<500).map { tenMilliseconds * Int64($0) })
    }

    @Test("the count starts again at 0 with each item")
    func restartsPerItem() async {
        let times = await observe(["join-1", "join-2"], every: MediaTime(value: 1, timescale: 2))
        #expect(times.map(\.seconds) == [0, 0.5, 1.0, 0, 0.5, 1.0])
    }

    @Test("once removeTimeObserver returns, the block is not called again")
    func removal() async {
        let engine = PlaybackEngine(sink: NullSink(pacing: .realTime), logger: quietLogger)
        let log = TimeLog()
        let (reported, reporter) = AsyncStream.makeStream(of: MediaTime.self)
        let token = engine.addPeriodicTimeObserver(forInterval: tenMilliseconds, queue: log.queue) {
            log.append($0)
            reporter.yield($0)
        }
        // A second observer that stays: its reports say how far playback went on after the removal.
        let (kept, keptReporter) = AsyncStream.makeStream(of: MediaTime.self)
        _ = engine.addPeriodicTimeObserver(forInterval: tenMilliseconds, queue: DispatchQueue(label: "kept")) {
            keptReporter.yield($0)
        }
        engine.enqueue([Fixtures.mp3("stereo-44k-5s")])
        engine.play()
        for await time in reported where time >= tenMilliseconds * 19 { break }
        engine.removeTimeObserver(token)
        let atRemoval = log.values
        let removedAt = atRemoval.last ?? .zero
        // 0.3 s more, or to the item's last multiple (4.99 s) when this task ran so late that less than that is left.
        let lastReported = MediaTime(value: 499, timescale: 100)
        for await time in kept where time >= min(removedAt + tenMilliseconds * 30, lastReported) { break }
        engine.shutdown()
        #expect(log.values == atRemoval, "called after removal (removed at \(removedAt))")
    }

    @Test("pause reports the exact time; a seek reports the new time, then the multiples after it")
    func pauseAndSeekExtras() async throws {
        let engine = PlaybackEngine(sink: NullSink(pacing: .realTime), logger: quietLogger)
        let log = TimeLog()
        let interval = MediaTime(value: 1, timescale: 10)
        let (reported, reporter) = AsyncStream.makeStream(of: MediaTime.self)
        _ = engine.addPeriodicTimeObserver(forInterval: interval, queue: log.queue) {
            log.append($0)
            reporter.yield($0)
        }
        // Paused by the playback crossing 0.25 s, on the observers' queue: where it pauses does not depend on when
        // this test's task is next scheduled (under a sanitizer with every suite running, that took seconds).
        let (pausedAtBoundary, pauseDone) = AsyncStream.makeStream(of: Void.self)
        _ = engine.addBoundaryTimeObserver(forTimes: [MediaTime(value: 1, timescale: 4)], queue: log.queue) {
            engine.pause()
            pauseDone.yield()
        }
        engine.enqueue([Fixtures.mp3("stereo-44k-5s")])
        engine.play()
        for await _ in pausedAtBoundary { break }
        // The pause's report is queued behind the boundary block that paused: it comes after the periodic times.
        var pauseReport: MediaTime?
        for await time in reported where time.timescale != interval.timescale {
            pauseReport = time
            break
        }
        let paused = try #require(pauseReport)
        #expect(paused.timescale == 44_100, "the pause is reported at the exact frame")
        #expect(paused >= MediaTime(value: 1, timescale: 4) && paused < interval * 25, "paused at \(paused)")
        #expect(log.values.contains(interval * 2), "the periodic times before the pause were reported")
        #expect(engine.seek(toFrame: 133_000))
        engine.play()
        for await time in reported where time >= interval * 32 { break }
        engine.shutdown()
        let afterSeek = Array(log.values.drop { $0 != MediaTime(value: 133_000, timescale: 44_100) })
        #expect(afterSeek.prefix(3) == [MediaTime(value: 133_000, timescale: 44_100), interval * 31, interval * 32])
    }

    @Test("a boundary observer fires once per item as playback crosses each time, and not for times a seek skips")
    func boundaries() async throws {
        let engine = PlaybackEngine(sink: NullSink(pacing: .unpaced), logger: quietLogger)
        let crossings = TimeLog()
        let times = [MediaTime(value: 12, timescale: 10), MediaTime(value: 1, timescale: 2), .indefinite]
        _ = engine.addBoundaryTimeObserver(forTimes: times, queue: crossings.queue) { crossings.append(.zero) }
        let periodic = TimeLog()
        _ = engine.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 2), queue: periodic.queue) {
            periodic.append($0)
        }
        engine.enqueue(["join-1", "join-2", "join-3"].map(Fixtures.mp3))
        engine.play()
        for await event in engine.events where event == .queueFinished { break }
        // Read before the shutdown, which closes the observers (see `observe`).
        #expect(crossings.values.count == 6, "0.5 s and 1.2 s in each of three 1.5 s items")
        #expect(periodic.values.count == 9)
        engine.shutdown()

        let seeking = PlaybackEngine(sink: NullSink(pacing: .realTime), logger: quietLogger)
        let crossed = TimeLog()
        _ = seeking.addBoundaryTimeObserver(forTimes: [MediaTime(value: 1, timescale: 1)], queue: crossed.queue) {
            crossed.append(.zero)
        }
        // The seek is made by the playback crossing 0.5 s, on an observer's queue, so that it is made before 1.0 s
        // however late this test's task is next scheduled; the wait ends when playback crosses 2.25 s after it.
        let seekMade = Collected<Bool>()
        _ = seeking.addBoundaryTimeObserver(forTimes: [MediaTime(value: 1, timescale: 2)], queue: seekMade.queue) {
            seekMade.append(seeking.seek(toFrame: 88_200))
        }
        let (pastTarget, reachedPastTarget) = AsyncStream.makeStream(of: Void.self)
        _ = seeking.addBoundaryTimeObserver(forTimes: [MediaTime(value: 9, timescale: 4)], queue: seekMade.queue) {
            reachedPastTarget.yield()
        }
        seeking.enqueue([Fixtures.mp3("stereo-44k-5s")])
        seeking.play()
        for await _ in pastTarget { break }
        seeking.shutdown()
        #expect(seekMade.values == [true])
        #expect(crossed.values.isEmpty, "the seek jumped over 1.0 s; nothing crossed it")
    }
}

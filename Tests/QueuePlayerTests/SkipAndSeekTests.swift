import Foundation
import Logging
import Synchronization
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// Checks that `recording` is a prefix of `left` (the item cut short) followed by exactly `then`; returns the cut
/// point in frames, or nil with a recorded issue.
func cutPoint<T: Equatable>(_ recording: [T], left: [T], then: [T]) -> Int? {
    let cut = recording.count - then.count
    guard cut >= 0, cut <= left.count else {
        Issue.record(
            "recording of \(recording.count / 2) frames cannot be a cut of \(left.count / 2) + \(then.count / 2)")
        return nil
    }
    if let difference = sampleDifference(Array(recording[..<cut]), Array(left[..<cut])) {
        Issue.record("before the cut: \(difference)")
        return nil
    }
    if let difference = sampleDifference(Array(recording[cut...]), then) {
        Issue.record("after the cut: \(difference)")
        return nil
    }
    return cut / 2
}

/// Runs a block once.
final class Once: Sendable {
    private let done = Mutex(false)

    /// True the first time only.
    func take() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}

/// Collects the engine's events, by name, until the queue ends; when `seconds` is given, runs `action` once, as the
/// first item's time crosses it (a boundary observer: item time, not the test's clock, so load cannot move it), and
/// only then plays: an engine that played before the observer was in place could be past that time already.
func events(
    of engine: PlaybackEngine, at seconds: Double? = nil, do action: @escaping @Sendable () -> Void = {}
) async -> [String] {
    if let seconds {
        let once = Once()
        let time = MediaTime(seconds: seconds, preferredTimescale: 44_100)
        _ = engine.addBoundaryTimeObserver(forTimes: [time], queue: .global()) {
            if once.take() { action() }
        }
        engine.play()
    }
    var names: [String] = []
    for await event in engine.events {
        names += eventNames([event])
        if event == .queueFinished { break }
    }
    return names
}

@Suite("Skipping and seeking drop what was decoded ahead, and nothing else", .tier(.servers))
struct SkipAndSeekTests {
    @Test("advancing leaves the item at once and plays the next ones whole, with no finished event for it")
    func advance() async throws {
        let sink = NullSink(pacing: .realTime, recordingFrames: 600_000)
        // A 5 s first item: the observer may run seconds late on a loaded machine and still skip from inside it.
        let engine = queued(["stereo-44k-5s", "join-2", "join-3"].map(Fixtures.mp3), on: sink)
        let names = await events(of: engine, at: 0.3) {
            engine.advanceToNextItem()
        }
        engine.shutdown()
        #expect(
            names == ["start stereo-44k-5s", "start join-2", "end join-2", "start join-3", "end join-3", "queue end"])
        let rest = try Fixtures.referenceFloat("join-2") + Fixtures.referenceFloat("join-3")
        let cut = cutPoint(sink.takeRecording(), left: try Fixtures.referenceFloat("stereo-44k-5s"), then: rest)
        #expect((cut ?? 0) > 4_410 && (cut ?? .max) < 220_500, "cut inside the first item, at \(cut ?? -1) frames")
    }

    @Test("seeking jumps to the exact frame of the same item, without a second start event")
    func seekForward() async throws {
        let sink = NullSink(pacing: .realTime, recordingFrames: 600_000)
        let engine = queued([Fixtures.mp3("stereo-44k-5s"), Fixtures.mp3("join-1")], on: sink)
        // The recording below shows the seek was carried out (the block runs on the observer's queue).
        let names = await events(of: engine, at: 0.2) { _ = engine.seek(toFrame: 198_450) }
        engine.shutdown()
        #expect(
            names == [
                "start stereo-44k-5s", "end stereo-44k-5s", "start join-1", "end join-1", "queue end",
            ])
        let reference = try Fixtures.referenceFloat("stereo-44k-5s")
        let rest = Array(reference[(198_450 * 2)...]) + (try Fixtures.referenceFloat("join-1"))
        let cut = cutPoint(sink.takeRecording(), left: reference, then: rest)
        #expect(cut != nil)
    }

    @Test("a seek while paused is heard from the new frame when play resumes")
    func seekWhilePaused() async throws {
        let sink = NullSink(pacing: .realTime, recordingFrames: 600_000)
        let engine = queued([Fixtures.mp3("stereo-44k-5s")], on: sink)
        var iterator = engine.events.makeAsyncIterator()
        await playThenPause(engine)
        #expect(await nextHeard(&iterator) == "start stereo-44k-5s")
        let (completions, completed) = AsyncStream.makeStream(of: Bool.self)
        #expect(engine.seek(toFrame: 200_000) { completed.yield($0) })
        var completion = completions.makeAsyncIterator()
        #expect(await completion.next() == true, "the seek was not carried out")
        #expect(engine.status().elapsedFrames == 200_000)
        engine.play()
        #expect(await nextHeard(&iterator) == "end stereo-44k-5s")
        engine.shutdown()
        let reference = try Fixtures.referenceFloat("stereo-44k-5s")
        #expect(cutPoint(sink.takeRecording(), left: reference, then: Array(reference[(200_000 * 2)...])) != nil)
    }

    @Test("through PulseAudio, a skip flushes the old item and the next ones are heard bit-exact")
    func advanceThroughPulseAudio() async throws {
        let server = try await PulseServer(name: "skip")
        let recording = try await MonitorRecording(server: server)
        let engine = try queued(["stereo-44k-5s", "join-2", "join-3"].map(Fixtures.mp3), on: pulseSink(server))
        let names = await events(of: engine, at: 0.7) {
            engine.advanceToNextItem()
        }
        // The queue's end is posted once its last frame was heard: 200 ms more of the sink's clock hold the tail.
        let samples = soundingFrames(await recording.finish(afterFurther: 8_820))
        engine.shutdown()
        #expect(
            names == ["start stereo-44k-5s", "start join-2", "end join-2", "start join-3", "end join-3", "queue end"])
        let rest = soundingFrames(try Fixtures.referenceInt16("join-2") + Fixtures.referenceInt16("join-3"))
        let cut = cutPoint(samples, left: soundingFrames(try Fixtures.referenceInt16("stereo-44k-5s")), then: rest)
        // 700 ms were waited; what the server held beyond what was heard is flushed, never heard.
        #expect((cut ?? 0) > 4_410 && (cut ?? .max) < 220_500, "cut inside the first item, at \(cut ?? -1) frames")
    }
}

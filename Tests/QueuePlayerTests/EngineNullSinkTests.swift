import Foundation
import Logging
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// An engine on `sink` that has queued `urls` and started playing, with a decode-ahead ring of `bufferFrames`.
func playing(
    _ urls: [URL], on sink: any AudioSink, bufferFrames: Int = Renderer.defaultBufferFrames
) -> PlaybackEngine {
    let engine = queued(urls, on: sink, bufferFrames: bufferFrames)
    engine.play()
    return engine
}

/// Returns once every skip, seek and edit given to `engine` so far has been carried out (what was decoded ahead
/// dropped and the output flushed, or what follows the playing item cut), so that what a stepped test renders next
/// is what they left; records a failure and throws after 10 s.
func restartsCarriedOut(_ engine: PlaybackEngine) throws {
    try #require(engine.waitUntilRestartsAreCarriedOut(until: .now() + 10), "the skips and edits were not carried out")
}

/// An engine on `sink` that has queued `urls`, not playing yet, with a decode-ahead ring of `bufferFrames`.
func queued(
    _ urls: [URL], on sink: any AudioSink, bufferFrames: Int = Renderer.defaultBufferFrames
) -> PlaybackEngine {
    let engine = PlaybackEngine(sink: sink, logger: quietLogger, bufferFrames: bufferFrames)
    engine.enqueue(urls)
    return engine
}

/// A PulseAudio sink on the private `server`.
func pulseSink(_ server: PulseServer) throws -> PulseAudioSink {
    try PulseAudioSink(server: server.address, logger: quietLogger)
}

/// Plays `names` through an engine on an unpaced recording `NullSink`; returns the events up to the queue's end
/// and the rendered samples.
/// With `outputSampleRate`, the sink plays every item at that rate, as a sound server's does.
func playOnNullSink(
    _ urls: [URL], pacing: NullSink.Pacing = .unpaced, outputSampleRate: Int? = nil
) async throws
    -> (events: [PlaybackEvent], samples: [Float])
{
    let sink = NullSink(pacing: pacing, recordingFrames: 2_000_000, outputSampleRate: outputSampleRate)
    let engine = PlaybackEngine(sink: sink, logger: quietLogger)
    engine.enqueue(urls)
    engine.play()
    var events: [PlaybackEvent] = []
    for await event in engine.events {
        events.append(event)
        if event == .queueFinished { break }
    }
    engine.shutdown()
    return (events, sink.takeRecording())
}

/// The next event as heard (``PlaybackEvent/itemReady(_:)`` skipped), by name; nil when the events end.
func nextHeard(_ iterator: inout AsyncStream<PlaybackEvent>.Iterator) async -> String? {
    while let event = await iterator.next() {
        if let name = eventNames([event]).first { return name }
    }
    return nil
}

/// The events names, for readable comparisons: "start join-1", "end join-1", "fail empty", "queue end".
/// ``PlaybackEvent/itemReady(_:)``, posted ahead of hearing, is left out.
func eventNames(_ events: [PlaybackEvent]) -> [String] {
    events.compactMap { event in
        func name(_ entry: QueueEntry) -> String { entry.url.deletingPathExtension().lastPathComponent }
        switch event {
        case .itemReady: return nil
        case .itemStarted(let item): return "start \(name(item.entry))"
        case .metadataChanged(let entry, let metadata): return "title \(name(entry)) \(metadata.title ?? "none")"
        case .liveGap(let entry, _): return "gap \(name(entry))"
        case .itemFinished(let entry): return "end \(name(entry))"
        case .itemFailed(let entry, let error): return "fail \(name(entry)) \(error.code)"
        case .queueFinished: return "queue end"
        case .outputFailed(let error): return "output failed \(error.code)"
        case .outputRestored: return "output restored"
        case .outputSuspended: return "output suspended"
        case .outputResumed: return "output resumed"
        // An unpaced sink stalls whenever the network is slower than decoding; the buffering tests look at these.
        case .stalled, .resumedAfterBuffering: return nil
        }
    }
}

@Suite("PlaybackEngine on the NullSink", .tier(.servers))
struct EngineNullSinkTests {
    @Test("three items join with no gap and no overlap, and events come in the order they are heard")
    func backToBack() async throws {
        let names = ["join-1", "join-2", "join-3"]
        let (events, samples) = try await playOnNullSink(names.map(Fixtures.mp3))
        let reference = try names.flatMap { try Fixtures.referenceFloat($0) }
        #expect(sampleDifference(samples, reference) == nil)
        #expect(
            eventNames(events) == [
                "start join-1", "end join-1", "start join-2", "end join-2", "start join-3", "end join-3", "queue end",
            ])
        if case .itemStarted(let first) = events.first {
            #expect(first.frameCount == 66_150)
            #expect(first.entry.id == 1)
        }
    }

    @Test("the engine decodes as far ahead as its sink asks, unless told otherwise")
    func decodeAheadFollowsTheSink() {
        func ringFrames(_ sink: NullSink, bufferFrames: Int? = nil) -> Int {
            let engine = PlaybackEngine(sink: sink, logger: quietLogger, bufferFrames: bufferFrames)
            defer { engine.shutdown() }
            return engine.renderer.capacityFrames
        }
        #expect(ringFrames(NullSink(pacing: .realTime)) == Renderer.defaultBufferFrames)
        // Unpaced, the sink takes the ring in batches of half of it: a bigger ring, fewer wake-ups.
        #expect(ringFrames(NullSink(pacing: .unpaced)) == 262_144)
        #expect(ringFrames(NullSink(pacing: .unpaced), bufferFrames: 4_096) == 4_096)
    }

    @Test("the engine's threads carry names that top -H and crash reports show")
    func threadsAreNamed() async throws {
        let engine = playing([Fixtures.mp3("stereo-44k-5s")], on: NullSink(pacing: .realTime))
        var iterator = engine.events.makeAsyncIterator()
        while let name = await nextHeard(&iterator), name != "start stereo-44k-5s" {}
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        let names = Set(
            tasks.compactMap { task in
                try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            })
        engine.shutdown()
        #expect(names.isSuperset(of: ["QP decode", "QP events", "QP null sink"]), "\(names.sorted())")
    }

    @Test("a bad item fails alone, in its place, and the queue goes on")
    func badItemsFailAlone() async throws {
        let urls = ["join-1", "does-not-exist", "not-audio", "truncated", "empty", "join-2"].map(Fixtures.mp3)
        let (events, samples) = try await playOnNullSink(urls)
        #expect(
            eventNames(events) == [
                "start join-1", "end join-1", "fail does-not-exist fileNotFound", "fail not-audio notMPEGAudio",
                "start truncated", "fail truncated truncated", "fail empty empty", "start join-2", "end join-2",
                "queue end",
            ])
        let reference = try ["join-1", "truncated", "join-2"].flatMap { try Fixtures.referenceFloat($0) }
        #expect(sampleDifference(samples, reference) == nil)
    }

    @Test("a change of sample rate plays on, without losing or adding a frame")
    func formatChange() async throws {
        let names = ["join-1", "stereo-48k", "mpeg25-8k", "mono-44k", "join-2"]
        let (events, samples) = try await playOnNullSink(names.map(Fixtures.mp3))
        #expect(eventNames(events).filter { $0.hasPrefix("start") } == names.map { "start \($0)" })
        #expect(events.last == .queueFinished)
        let reference = try names.flatMap { try Fixtures.referenceFloat($0) }
        #expect(sampleDifference(samples, reference) == nil)
    }

    @Test("the real-time null sink takes at least as long as the audio lasts")
    func realTimePacing() async throws {
        let clock = ContinuousClock()
        let started = clock.now
        let (events, samples) = try await playOnNullSink([Fixtures.mp3("join-1")], pacing: .realTime)
        #expect(clock.now - started >= .milliseconds(1400))
        #expect(eventNames(events) == ["start join-1", "end join-1", "queue end"])
        #expect(sampleDifference(samples, try Fixtures.referenceFloat("join-1")) == nil)
    }

    @Test("pause holds the position and play resumes from the same frame")
    func pauseAndResume() async throws {
        // Audio time moves only as the test renders, so the position while paused is exact, not a reading taken
        // at some moment: 13,230 frames (0.3 s) heard, then the pause, then the rest of the item.
        let sink = SteppedSink()
        let engine = playing([Fixtures.mp3("stereo-44k-5s")], on: sink)
        var iterator = engine.events.makeAsyncIterator()
        var heard = try sink.renderAll(frames: 13_230)
        #expect(await nextHeard(&iterator) == "start stereo-44k-5s")
        engine.pause()
        #expect(sink.streamIsPaused == true, "the output is paused before pause returns")
        let pausedAt = engine.status()
        #expect(pausedAt.isPlaying == false)
        #expect(pausedAt.elapsedFrames == 13_230)
        engine.play()
        #expect(sink.streamIsPaused == false)
        #expect(engine.status().elapsedFrames == 13_230, "play resumes from the frame where the pause held")
        let reference = try Fixtures.referenceFloat("stereo-44k-5s")
        heard += try sink.renderAll(frames: reference.count / 2 - 13_230)
        #expect(await nextHeard(&iterator) == "end stereo-44k-5s")
        #expect(await nextHeard(&iterator) == "queue end")
        engine.shutdown()
        #expect(sampleDifference(heard, reference) == nil, "nothing lost or repeated across the pause")
    }

    @Test("a preroll opens the first item and the output paused; the first play is heard from the item's first frame")
    func preroll() async throws {
        let sink = SteppedSink()
        let engine = PlaybackEngine(sink: sink, logger: quietLogger)
        engine.enqueue([Fixtures.mp3("join-1")])
        var iterator = engine.events.makeAsyncIterator()
        engine.preroll()
        // Posted once the item and the stream are open, before anything can be heard.
        let opened = await iterator.next()
        guard case .itemReady(let info) = opened else {
            Issue.record("expected the item opened first, got \(String(describing: opened))")
            engine.shutdown()
            return
        }
        #expect(info.entry.url.lastPathComponent == "join-1.mp3")
        #expect(sink.streamIsPaused == true)
        #expect(!engine.isPlaybackRequested)
        #expect(engine.status().current == nil, "nothing is current before it is heard")
        engine.play()
        #expect(sink.streamIsPaused == false)
        let heard = try sink.renderAll(frames: 4_410)
        #expect(await nextHeard(&iterator) == "start join-1")
        engine.shutdown()
        let reference = try Fixtures.referenceFloat("join-1")
        #expect(sampleDifference(heard, Array(reference.prefix(heard.count))) == nil)
    }

    @Test("status reports the item being heard and how far into it")
    func status() async throws {
        // Audio time moves only as the test renders: 20,000 frames heard, exactly, however loaded the machine.
        // The item is current once the events thread has noticed its start was heard and announced it; right after
        // the first frames are rendered it may not be yet (3 of 5 runs without this wait).
        let sink = SteppedSink()
        let engine = playing([Fixtures.mp3("id3v24-multi")], on: sink)
        var iterator = engine.events.makeAsyncIterator()
        try sink.render(frames: 20_000, deadline: .now() + 10) { _, _ in }
        #expect(await nextHeard(&iterator) == "start id3v24-multi")
        let status = engine.status()
        engine.shutdown()
        #expect(status.current?.metadata.artists == ["Ana Ñúñez", "Bo Li 李"])
        #expect(status.current?.duration == 3.0)
        #expect(status.elapsedFrames == 20_000)
        #expect(status.isPlaying)
    }
}

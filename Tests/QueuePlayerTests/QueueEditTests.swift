import Foundation
import Logging
import TestSupport
import Testing

@testable import QueuePlayer

/// A decode-ahead ring of at least 4 s: the whole of a 1.5 s first item and the next are decoded moments after the
/// start, so that an edit made once the test sees that lands while the first item plays, however late the test's
/// task is scheduled. (With the default ring of 0.74 s, the next item is decoded ahead only in the first item's last
/// 0.74 s, and a test task scheduled half a second late under load edited after the first item had ended.)
let wholeItemsAhead = 176_400

/// Waits until the engine has played `seconds` of the current item and has decoded the next one ahead.
func waitUntilNextIsDecoded(_ engine: PlaybackEngine, after seconds: Double) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while engine.status().elapsed < seconds || engine.state.withLock({ $0.timeline.entries.count }) < 2 {
        try #require(ContinuousClock.now < deadline, "the next item was never decoded ahead")
        try await Task.sleep(for: .milliseconds(10))
    }
}

@Suite("Queue edits while playing")
struct QueueEditTests {
    @Test("inserting after the playing item, while the next is already decoded, plays it in between, sample-exact")
    func insertBetweenDecodedItems() async throws {
        let sink = NullSink(pacing: .realTime, recordingFrames: 600_000)
        let engine = playing(["join-1", "join-3"].map(Fixtures.mp3), on: sink, bufferFrames: wholeItemsAhead)
        try await waitUntilNextIsDecoded(engine, after: 0.2)
        let playingEntry = try #require(engine.queue().first)
        let inserted = engine.insert([Fixtures.mp3("join-2")], after: playingEntry)
        #expect(engine.queue().map(\.url.lastPathComponent) == ["join-1.mp3", "join-2.mp3", "join-3.mp3"])
        #expect(inserted.count == 1)
        let names = await events(of: engine)
        engine.shutdown()
        #expect(
            names == [
                "start join-1", "end join-1", "start join-2", "end join-2", "start join-3", "end join-3", "queue end",
            ])
        let reference = try ["join-1", "join-2", "join-3"].flatMap { try Fixtures.referenceFloat($0) }
        #expect(sampleDifference(sink.takeRecording(), reference) == nil)
    }

    @Test("removing the item decoded ahead drops it, and the one after follows sample-exact")
    func removeDecodedAhead() async throws {
        let sink = NullSink(pacing: .realTime, recordingFrames: 600_000)
        let engine = playing(["join-1", "join-2", "join-3"].map(Fixtures.mp3), on: sink, bufferFrames: wholeItemsAhead)
        try await waitUntilNextIsDecoded(engine, after: 0.2)
        let next = engine.queue()[1]
        #expect(next.url.lastPathComponent == "join-2.mp3")
        engine.remove(next)
        #expect(engine.queue().map(\.url.lastPathComponent) == ["join-1.mp3", "join-3.mp3"])
        let names = await events(of: engine)
        engine.shutdown()
        #expect(names == ["start join-1", "end join-1", "start join-3", "end join-3", "queue end"])
        let reference = try ["join-1", "join-3"].flatMap { try Fixtures.referenceFloat($0) }
        #expect(sampleDifference(sink.takeRecording(), reference) == nil)
    }

    @Test("removing the playing item moves on; edits to items not yet decoded only change the order")
    func removePlayingAndEditPending() async throws {
        let sink = NullSink(pacing: .realTime)
        // A 5 s first item: the edits below land while it plays, even on a loaded machine.
        let engine = playing(["stereo-44k-5s", "stereo-48k", "join-2"].map(Fixtures.mp3), on: sink)
        var iterator = engine.events.makeAsyncIterator()
        #expect(await nextHeard(&iterator) == "start stereo-44k-5s")
        let queued = engine.queue()
        let last = try #require(queued.last)
        engine.insert([Fixtures.mp3("join-3")], after: last)
        engine.remove(queued[1])
        engine.remove(queued[0])
        #expect(engine.queue().map(\.url.lastPathComponent) == ["join-2.mp3", "join-3.mp3"])
        var names: [String] = []
        while let event = await iterator.next() {
            names += eventNames([event])
            if event == .queueFinished { break }
        }
        engine.shutdown()
        #expect(names == ["start join-2", "end join-2", "start join-3", "end join-3", "queue end"])
    }

    @Test("removing everything stops playback and ends the queue; adding afterwards plays again")
    func removeAll() async throws {
        let sink = NullSink(pacing: .realTime)
        let engine = playing(["stereo-44k-5s", "join-1"].map(Fixtures.mp3), on: sink)
        var iterator = engine.events.makeAsyncIterator()
        #expect(await nextHeard(&iterator) == "start stereo-44k-5s")
        engine.removeAll()
        #expect(engine.queue().isEmpty)
        #expect(await nextHeard(&iterator) == "queue end")
        engine.enqueue([Fixtures.mp3("join-2")])
        #expect(await nextHeard(&iterator) == "start join-2")
        engine.shutdown()
    }
}

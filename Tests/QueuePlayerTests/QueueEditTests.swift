import Foundation
import Logging
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// A decode-ahead ring of 4 s, before a 5 s first item: the next item is decoded about 1 s after the start, and an
/// edit made once the test sees that lands while the first item plays as long as the test's task runs within the
/// 4 s left, which it does on a loaded machine.
let fourSecondsAhead = 176_400

/// Reads the engine's events until the first item is being heard and the next one has been opened behind it (its
/// ``PlaybackEvent/itemReady(_:)``: decoding has reached it), and returns the names of those heard.
func untilNextIsDecoded(_ iterator: inout AsyncStream<PlaybackEvent>.Iterator) async -> [String] {
    var names: [String] = []
    var opened = 0
    while names.isEmpty || opened < 2, let event = await iterator.next() {
        if case .itemReady = event { opened += 1 }
        names += eventNames([event])
    }
    return names
}

/// The names of the events read from `iterator` until the queue ends.
func namesUntilQueueEnd(_ iterator: inout AsyncStream<PlaybackEvent>.Iterator) async -> [String] {
    var names: [String] = []
    while let event = await iterator.next() {
        names += eventNames([event])
        if event == .queueFinished { break }
    }
    return names
}

/// Alone: each edit must land while a 5 s item plays on a real-time null sink, and beside the parallel tiers the
/// test's task ran only after the item had ended (under ThreadSanitizer, and in 2 of 4 plain fresh-clone runs).
@Suite("Queue edits while playing", .tier(.alone))
struct QueueEditTests {
    @Test("inserting after the playing item, while the next is already decoded, plays it in between, sample-exact")
    func insertBetweenDecodedItems() async throws {
        let sink = NullSink(pacing: .realTime, recordingFrames: 600_000)
        let engine = playing(["stereo-44k-5s", "join-3"].map(Fixtures.mp3), on: sink, bufferFrames: fourSecondsAhead)
        var iterator = engine.events.makeAsyncIterator()
        var names = await untilNextIsDecoded(&iterator)
        let playingEntry = try #require(engine.queue().first)
        let inserted = engine.insert([Fixtures.mp3("join-2")], after: playingEntry)
        #expect(engine.queue().map(\.url.lastPathComponent) == ["stereo-44k-5s.mp3", "join-2.mp3", "join-3.mp3"])
        #expect(inserted.count == 1)
        names += await namesUntilQueueEnd(&iterator)
        engine.shutdown()
        #expect(
            names == [
                "start stereo-44k-5s", "end stereo-44k-5s", "start join-2", "end join-2", "start join-3", "end join-3",
                "queue end",
            ])
        let reference = try ["stereo-44k-5s", "join-2", "join-3"].flatMap { try Fixtures.referenceFloat($0) }
        #expect(sampleDifference(sink.takeRecording(), reference) == nil)
    }

    @Test("removing the item decoded ahead drops it, and the one after follows sample-exact")
    func removeDecodedAhead() async throws {
        let sink = NullSink(pacing: .realTime, recordingFrames: 600_000)
        let engine = playing(
            ["stereo-44k-5s", "join-2", "join-3"].map(Fixtures.mp3), on: sink, bufferFrames: fourSecondsAhead)
        var iterator = engine.events.makeAsyncIterator()
        var names = await untilNextIsDecoded(&iterator)
        // Required, not indexed: a queue that moved on would fail the test, not crash every test in the process.
        let next = try #require(engine.queue().dropFirst().first, "the queue moved on: \(engine.queue())")
        #expect(next.url.lastPathComponent == "join-2.mp3")
        engine.remove(next)
        #expect(engine.queue().map(\.url.lastPathComponent) == ["stereo-44k-5s.mp3", "join-3.mp3"])
        names += await namesUntilQueueEnd(&iterator)
        engine.shutdown()
        #expect(names == ["start stereo-44k-5s", "end stereo-44k-5s", "start join-3", "end join-3", "queue end"])
        let reference = try ["stereo-44k-5s", "join-3"].flatMap { try Fixtures.referenceFloat($0) }
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
        try #require(queued.count == 3, "the queue moved on: \(queued)")
        let last = try #require(queued.last)
        engine.insert([Fixtures.mp3("join-3")], after: last)
        engine.remove(queued[1])
        engine.remove(queued[0])
        #expect(engine.queue().map(\.url.lastPathComponent) == ["join-2.mp3", "join-3.mp3"])
        let names = await namesUntilQueueEnd(&iterator)
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

import Foundation
import Logging
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// A decode-ahead ring of at least 4 s (5.9 s once rounded up to a power of two): a 5 s first item fits in it whole,
/// so the next item is opened and decoded ahead from the start.
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

/// On a stepped sink, so that each edit lands where the test puts it: audio time moves only as the test renders, and
/// however late the test's task runs (under ThreadSanitizer, or on a loaded machine) the playing item cannot end
/// first. On a real-time sink it did, even alone.
@Suite("Queue edits while playing", .tier(.deterministic), .timeLimit(.minutes(1)))
struct QueueEditTests {
    /// Half a second of the first item: heard before each edit.
    private let heardBeforeEdit = 22_050

    @Test("inserting after the playing item, while the next is already decoded, plays it in between, sample-exact")
    func insertBetweenDecodedItems() async throws {
        let sink = SteppedSink()
        let engine = playing(["stereo-44k-5s", "join-3"].map(Fixtures.mp3), on: sink, bufferFrames: fourSecondsAhead)
        var iterator = engine.events.makeAsyncIterator()
        var heard = try sink.renderAll(frames: heardBeforeEdit)
        var names = await untilNextIsDecoded(&iterator)
        let playingEntry = try #require(engine.queue().first)
        let inserted = engine.insert([Fixtures.mp3("join-2")], after: playingEntry)
        #expect(engine.queue().map(\.url.lastPathComponent) == ["stereo-44k-5s.mp3", "join-2.mp3", "join-3.mp3"])
        #expect(inserted.count == 1)
        try restartsCarriedOut(engine)
        let reference = try ["stereo-44k-5s", "join-2", "join-3"].flatMap { try Fixtures.referenceFloat($0) }
        heard += try sink.renderAll(frames: reference.count / 2 - heardBeforeEdit)
        names += await namesUntilQueueEnd(&iterator)
        engine.shutdown()
        #expect(
            names == [
                "start stereo-44k-5s", "end stereo-44k-5s", "start join-2", "end join-2", "start join-3", "end join-3",
                "queue end",
            ])
        #expect(sampleDifference(heard, reference) == nil)
    }

    @Test("removing the item decoded ahead drops it, and the one after follows sample-exact")
    func removeDecodedAhead() async throws {
        let sink = SteppedSink()
        let engine = playing(
            ["stereo-44k-5s", "join-2", "join-3"].map(Fixtures.mp3), on: sink, bufferFrames: fourSecondsAhead)
        var iterator = engine.events.makeAsyncIterator()
        var heard = try sink.renderAll(frames: heardBeforeEdit)
        var names = await untilNextIsDecoded(&iterator)
        // Required, not indexed: a queue that moved on would fail the test, not crash every test in the process.
        let next = try #require(engine.queue().dropFirst().first, "the queue moved on: \(engine.queue())")
        #expect(next.url.lastPathComponent == "join-2.mp3")
        engine.remove(next)
        #expect(engine.queue().map(\.url.lastPathComponent) == ["stereo-44k-5s.mp3", "join-3.mp3"])
        try restartsCarriedOut(engine)
        let reference = try ["stereo-44k-5s", "join-3"].flatMap { try Fixtures.referenceFloat($0) }
        heard += try sink.renderAll(frames: reference.count / 2 - heardBeforeEdit)
        names += await namesUntilQueueEnd(&iterator)
        engine.shutdown()
        #expect(names == ["start stereo-44k-5s", "end stereo-44k-5s", "start join-3", "end join-3", "queue end"])
        #expect(sampleDifference(heard, reference) == nil)
    }

    @Test("removing the playing item moves on; edits to items not yet decoded only change the order")
    func removePlayingAndEditPending() async throws {
        let sink = SteppedSink()
        let engine = playing(["stereo-44k-5s", "stereo-48k", "join-2"].map(Fixtures.mp3), on: sink)
        var iterator = engine.events.makeAsyncIterator()
        var heard = try sink.renderAll(frames: heardBeforeEdit)
        #expect(await nextHeard(&iterator) == "start stereo-44k-5s")
        let queued = engine.queue()
        try #require(queued.count == 3, "the queue moved on: \(queued)")
        let last = try #require(queued.last)
        engine.insert([Fixtures.mp3("join-3")], after: last)
        engine.remove(queued[1])
        engine.remove(queued[0])
        #expect(engine.queue().map(\.url.lastPathComponent) == ["join-2.mp3", "join-3.mp3"])
        try restartsCarriedOut(engine)
        let rest = try ["join-2", "join-3"].flatMap { try Fixtures.referenceFloat($0) }
        heard += try sink.renderAll(frames: rest.count / 2)
        let names = await namesUntilQueueEnd(&iterator)
        engine.shutdown()
        #expect(names == ["start join-2", "end join-2", "start join-3", "end join-3", "queue end"])
        let reference = try Array(Fixtures.referenceFloat("stereo-44k-5s").prefix(heardBeforeEdit * 2)) + rest
        #expect(sampleDifference(heard, reference) == nil, "the removed item stops where it was heard")
    }

    @Test("removing everything stops playback and ends the queue; adding afterwards plays again")
    func removeAll() async throws {
        let sink = SteppedSink()
        let engine = playing(["stereo-44k-5s", "join-1"].map(Fixtures.mp3), on: sink)
        var iterator = engine.events.makeAsyncIterator()
        _ = try sink.renderAll(frames: heardBeforeEdit)
        #expect(await nextHeard(&iterator) == "start stereo-44k-5s")
        engine.removeAll()
        #expect(engine.queue().isEmpty)
        try restartsCarriedOut(engine)
        #expect(await nextHeard(&iterator) == "queue end")
        engine.enqueue([Fixtures.mp3("join-2")])
        let heard = try sink.renderAll(frames: heardBeforeEdit)
        #expect(await nextHeard(&iterator) == "start join-2")
        engine.shutdown()
        let reference = try Fixtures.referenceFloat("join-2")
        #expect(sampleDifference(heard, Array(reference.prefix(heard.count))) == nil, "join-2 from its first frame")
    }
}

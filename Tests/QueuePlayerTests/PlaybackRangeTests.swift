import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// `QueuePlayer.setPlaybackRange(_:of:)`: an entry plays a part of its item in place of the whole, as MPD's `rangeid`.
/// On a stepped sink, so that an edit lands where the test puts it.
@Suite("QueuePlayer: an entry's playback range", .tier(.deterministic), .timeLimit(.minutes(1)))
struct PlaybackRangeTests {
    private func seconds(_ value: Double) -> MediaTime {
        MediaTime(value: Int64(value * 44_100), timescale: 44_100)
    }

    private func player(_ names: [String], on sink: SteppedSink) -> (QueuePlayer, [PlayerItem]) {
        let items = names.map { PlayerItem(url: Fixtures.mp3($0)) }
        return (QueuePlayer(items: items, sink: sink, logger: quietLogger), items)
    }

    @Test("an entry plays just its range, joined without a gap to the items around it, and reports the range's length")
    func playsItsPart() throws {
        let sink = SteppedSink()
        let (player, items) = player(["join-1", "sweep-44k-4s", "join-2"], on: sink)
        let entries = player.entries()
        let range = MediaTimeRange(start: seconds(1), duration: seconds(1.5))
        #expect(player.setPlaybackRange(range, of: entries[1]))
        #expect(player.playbackRanges() == [entries[1].id: range])
        player.play()
        let sweep = try Fixtures.referenceFloat("sweep-44k-4s")
        let reference =
            try Fixtures.referenceFloat("join-1") + sweep[(44_100 * 2)..<(110_250 * 2)]
            + Fixtures.referenceFloat("join-2")
        let heard = try sink.renderAll(frames: reference.count / 2)
        player.shutdown()
        #expect(sampleDifference(heard, Array(reference)) == nil)
        #expect(items[1].duration == MediaTime(value: 66_150, timescale: 44_100), "the range's length")
    }

    @Test("an open end plays to the item's end; a range past the end plays nothing; nil plays the whole item again")
    func endsAndClearing() throws {
        let sink = SteppedSink()
        let (player, _) = player(["join-1", "sweep-44k-4s", "join-2", "join-3"], on: sink)
        let entries = player.entries()
        #expect(player.setPlaybackRange(MediaTimeRange(start: seconds(3), duration: .positiveInfinity), of: entries[1]))
        #expect(player.setPlaybackRange(MediaTimeRange(start: seconds(9), duration: seconds(1)), of: entries[2]))
        #expect(player.setPlaybackRange(MediaTimeRange(start: seconds(1), duration: seconds(0.2)), of: entries[3]))
        #expect(player.setPlaybackRange(nil, of: entries[3]))
        #expect(player.playbackRanges().keys.sorted() == [entries[1].id, entries[2].id])
        player.play()
        let sweep = try Fixtures.referenceFloat("sweep-44k-4s")
        let reference =
            try Fixtures.referenceFloat("join-1") + sweep[(132_300 * 2)...] + Fixtures.referenceFloat("join-3")
        let heard = try sink.renderAll(frames: reference.count / 2)
        player.shutdown()
        #expect(sampleDifference(heard, Array(reference)) == nil)
    }

    @Test("the current entry, an entry not queued and a range that is not a part are refused, and nothing changes")
    func refusals() throws {
        let sink = SteppedSink()
        let (player, _) = player(["join-1", "join-2"], on: sink)
        let entries = player.entries()
        let range = MediaTimeRange(start: .zero, duration: seconds(1))
        #expect(!player.setPlaybackRange(range, of: entries[0]), "the current entry")
        #expect(!player.setPlaybackRange(range, of: QueueEntry(id: 99, location: entries[1].location)))
        #expect(!player.setPlaybackRange(MediaTimeRange(start: seconds(-1), duration: seconds(1)), of: entries[1]))
        #expect(!player.setPlaybackRange(MediaTimeRange(start: .zero, duration: .zero), of: entries[1]))
        #expect(!player.setPlaybackRange(MediaTimeRange(start: .indefinite, duration: seconds(1)), of: entries[1]))
        #expect(player.playbackRanges().isEmpty)
        player.shutdown()
    }

    @Test("the current entry of a stopped player takes a range, and plays from its start on the next play")
    func currentWhileStopped() throws {
        let sink = SteppedSink()
        let (player, _) = player(["sweep-44k-4s", "join-1"], on: sink)
        player.play()
        var heard = try sink.renderAll(frames: 10_000)
        player.stop()
        let entries = player.entries()
        #expect(player.setPlaybackRange(MediaTimeRange(start: seconds(1), duration: seconds(1)), of: entries[0]))
        player.play()
        try #require(player.engine.waitUntilRestartsAreCarriedOut(until: .now() + 10))
        let sweep = try Fixtures.referenceFloat("sweep-44k-4s")
        let reference =
            try Array(sweep.prefix(20_000)) + sweep[(44_100 * 2)..<(88_200 * 2)]
            + Fixtures.referenceFloat("join-1")
        heard += try sink.renderAll(frames: reference.count / 2 - 10_000)
        player.shutdown()
        #expect(sampleDifference(heard, Array(reference)) == nil)
    }

    @Test("a range given to the entry decoded ahead: the current one plays on unbroken, then just the range")
    func entryDecodedAhead() async throws {
        let sink = SteppedSink()
        let (player, _) = player(["join-1", "sweep-44k-4s"], on: sink)
        var events = player.playbackEvents().makeAsyncIterator()
        player.play()
        // The ring holds 32,768 frames: with 50,000 of the first item's 66,150 heard, the second is decoded ahead.
        var heard = try sink.renderAll(frames: 50_000)
        _ = await untilNextIsDecoded(&events)
        let entries = player.entries()
        #expect(player.setPlaybackRange(MediaTimeRange(start: seconds(2), duration: seconds(1)), of: entries[1]))
        try #require(player.engine.waitUntilRestartsAreCarriedOut(until: .now() + 10))
        let sweep = try Fixtures.referenceFloat("sweep-44k-4s")
        let reference = try Fixtures.referenceFloat("join-1") + sweep[(88_200 * 2)..<(132_300 * 2)]
        heard += try sink.renderAll(frames: reference.count / 2 - 50_000)
        player.shutdown()
        #expect(sampleDifference(heard, Array(reference)) == nil)
    }

    @Test("an entry repeated plays its range again")
    func repeated() throws {
        // Under `.all` the whole queue plays again, each entry's repetition with its range.
        let sink = SteppedSink()
        let (player, _) = player(["join-1", "sweep-44k-4s"], on: sink)
        let entries = player.entries()
        #expect(player.setPlaybackRange(MediaTimeRange(start: seconds(0.5), duration: seconds(0.5)), of: entries[1]))
        player.repeatMode = .all
        player.play()
        let part = try Array(Fixtures.referenceFloat("sweep-44k-4s")[(22_050 * 2)..<(44_100 * 2)])
        let first = try Fixtures.referenceFloat("join-1")
        let reference = first + part + first + part
        let heard = try sink.renderAll(frames: reference.count / 2)
        player.shutdown()
        #expect(sampleDifference(heard, reference) == nil)
    }
}

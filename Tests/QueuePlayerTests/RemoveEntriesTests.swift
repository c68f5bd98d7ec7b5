import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// `QueuePlayer.remove(_:)` of several entries: one change, as MPD's `delete START:END` needs it.
@Suite("QueuePlayer: removing several entries at once", .tier(.deterministic), .timeLimit(.minutes(1)))
struct RemoveEntriesTests {
    /// Half a second of the first item: heard before each edit.
    private let heardBeforeEdit = 22_050

    private func playing(_ names: [String], on sink: SteppedSink) -> QueuePlayer {
        let items = names.map { PlayerItem(url: Fixtures.mp3($0)) }
        let player = QueuePlayer(items: items, sink: sink, logger: quietLogger)
        player.play()
        return player
    }

    @Test("with the current entry among them: it stops where it was heard, and the next one that stays plays")
    func current() throws {
        let sink = SteppedSink()
        let player = playing(["stereo-44k-5s", "join-1", "join-2", "join-3"], on: sink)
        var heard = try sink.renderAll(frames: heardBeforeEdit)
        let queued = player.entries()
        player.remove([queued[1], queued[0], queued[3]])
        #expect(player.entries() == [queued[2]])
        #expect(player.currentItem.flatMap(player.entry(for:)) == queued[2])
        try #require(player.engine.waitUntilRestartsAreCarriedOut(until: .now() + 10))
        let rest = try Fixtures.referenceFloat("join-2")
        heard += try sink.renderAll(frames: rest.count / 2)
        let reference = try Array(Fixtures.referenceFloat("stereo-44k-5s").prefix(heardBeforeEdit * 2)) + rest
        #expect(sampleDifference(heard, reference) == nil, "the current item stops where it was heard")
    }

    @Test("without it: the current entry plays on unbroken, then the first that stays; gone ones are ignored")
    func others() throws {
        let sink = SteppedSink()
        let player = playing(["join-1", "join-2", "join-3", "join-2"], on: sink)
        var heard = try sink.renderAll(frames: 1024)
        let queued = player.entries()
        player.remove([queued[1]])
        player.remove([queued[3], queued[1], queued[1]])
        #expect(player.entries() == [queued[0], queued[2]])
        let reference = try ["join-1", "join-3"].flatMap { try Fixtures.referenceFloat($0) }
        heard += try sink.renderAll(frames: reference.count / 2 - 1024)
        #expect(sampleDifference(heard, reference) == nil)
    }
}

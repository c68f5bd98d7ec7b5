import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// `QueuePlayer.rearrange(_:)`: a new order of the whole queue in one change, as MPD's `shuffle`, `swap` and range
/// `move` need it.
@Suite("QueuePlayer: rearranging the queue", .tier(.deterministic), .timeLimit(.minutes(1)))
struct RearrangeTests {
    @Test("the items after the current one in a new order: the current one plays on unbroken, then the new second")
    func keepCurrent() throws {
        let sink = SteppedSink()
        let player = QueuePlayer.ofJoinItems(3, sink: sink)
        let queued = player.entries()
        player.play()
        var heard = try sink.renderAll(frames: 1024)
        #expect(player.rearrange([queued[0], queued[2], queued[1]]))
        #expect(player.entries() == [queued[0], queued[2], queued[1]])
        let first = try Fixtures.referenceFloat("join-1")
        let third = try Fixtures.referenceFloat("join-3")
        heard += try sink.renderAll(frames: first.count / 2 + third.count / 2 - 1024)
        #expect(sampleDifference(heard, first + third) == nil, "join-1 whole, then join-3, with nothing between")
    }

    @Test("a new first item is current at once, before a frame of it is heard")
    func newFirst() throws {
        let player = QueuePlayer.ofJoinItems(4)
        let queued = player.entries()
        #expect(player.rearrange([queued[3], queued[1], queued[0], queued[2]]))
        #expect(player.entries() == [queued[3], queued[1], queued[0], queued[2]])
        #expect(player.currentItem.flatMap(player.entry(for:)) == queued[3])
        #expect(player.currentItem === player.items().first)
    }

    @Test("anything but every queued entry once is refused, and the queue stays as it was")
    func refusals() {
        let player = QueuePlayer.ofJoinItems(3)
        let other = QueuePlayer.ofJoinItems(5).entries()[4]
        let queued = player.entries()
        for wrong in [
            [queued[1], queued[0]], [queued[2], queued[1], queued[0], queued[0]], [queued[2], queued[1], queued[1]],
            [queued[2], queued[1], other], [],
        ] {
            #expect(!player.rearrange(wrong), "\(wrong)")
            #expect(player.entries() == queued)
        }
        #expect(player.rearrange(queued), "the order it has is an order")
        #expect(player.entries() == queued)
    }
}

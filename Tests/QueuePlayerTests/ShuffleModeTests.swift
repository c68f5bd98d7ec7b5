import Dispatch
import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// `QueuePlayer.shuffleMode`: the queue is the play order, so shuffling reorders the items after the current one,
/// and turning it off puts them back.
@Suite("QueuePlayer: shuffle", .tier(.deterministic), .timeLimit(.minutes(1)))
struct ShuffleModeTests {
    @Test("shuffled, the items after the current one are in a new order; unshuffled, back in theirs")
    func shuffleAndBack() {
        let player = QueuePlayer.ofJoinItems(20)
        let queued = player.entries()
        player.shuffleMode = .items
        let shuffled = player.entries()
        #expect(shuffled.first == queued.first, "the current item stays current")
        #expect(Set(shuffled) == Set(queued) && shuffled != queued, "a new order of the same 20 (1 in 19! to fail)")
        player.shuffleMode = .off
        #expect(player.entries() == queued)
    }

    @Test("while shuffled, appended items go among the others; unshuffled, after them in the order they came")
    func appendWhileShuffled() {
        let player = QueuePlayer.ofJoinItems(10)
        let queued = player.entries()
        player.shuffleMode = .items
        let added = player.insert((0..<10).map { _ in Fixtures.mp3("join-1") }, after: nil)
        let shuffled = player.entries()
        #expect(Set(shuffled) == Set(queued + added) && shuffled.first == queued.first)
        #expect(Array(shuffled.suffix(10)) != added, "not all at the end (1 in 20!/10! to fail)")
        let explicit = player.insert([Fixtures.mp3("join-2")], after: queued[0])
        #expect(player.entries()[1] == explicit[0], "an item inserted after a given one goes there")
        player.shuffleMode = .off
        #expect(player.entries() == queued + added + explicit)
    }

    @Test("shuffled while playing: the current item plays on without a break, then the new second item")
    func shuffleWhilePlaying() throws {
        let sink = SteppedSink()
        let player = QueuePlayer.ofJoinItems(3, sink: sink)
        player.play()
        var heard = try sink.renderAll(frames: 1024)
        player.shuffleMode = .items
        let next = try #require(player.items().dropFirst().first).url.deletingPathExtension().lastPathComponent
        let first = try Fixtures.referenceFloat("join-1")
        let second = try Fixtures.referenceFloat(next)
        heard += try sink.renderAll(frames: (first.count + second.count) / 2 - 1024)
        #expect(sampleDifference(heard, first + second) == nil)
    }
}

import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// `QueuePlayer.setPriority(_:of:)`: while shuffled, the items to come play in groups of falling priority, each group
/// in random order, as MPD's `prio` orders its random sequence.
@Suite("QueuePlayer: priorities", .tier(.deterministic), .timeLimit(.minutes(1)))
struct PriorityTests {
    @Test("unshuffled, a priority is kept and changes no order; the current entry has none")
    func unshuffled() {
        let player = QueuePlayer.ofJoinItems(6)
        let queued = player.entries()
        player.setPriority(5, of: [queued[3], queued[0]])
        #expect(player.entries() == queued)
        #expect(player.priorities() == [queued[3].id: 5])
        player.setPriority(0, of: [queued[3]])
        #expect(player.priorities().isEmpty)
    }

    @Test("shuffled, the highest priority plays next, then the lower, then the rest; new items join the rest")
    func shuffledGroups() {
        let player = QueuePlayer.ofJoinItems(20)
        let queued = player.entries()
        player.shuffleMode = .items
        player.setPriority(9, of: [queued[17], queued[5]])
        player.setPriority(4, of: [queued[11]])
        var order = player.entries()
        #expect(order.first == queued.first && Set(order) == Set(queued))
        #expect(Set(order[1...2]) == [queued[17], queued[5]] && order[3] == queued[11], "\(order)")
        let prioritized = Array(order.prefix(4))
        _ = player.insert((0..<10).map { _ in Fixtures.mp3("join-1") }, after: nil)
        order = player.entries()
        #expect(Array(order.prefix(4)) == prioritized, "new items go among those without a priority: \(order)")
        player.setPriority(0, of: [queued[5]])
        order = player.entries()
        #expect(order[1] == queued[17] && order[2] == queued[11] && !order.prefix(3).contains(queued[5]), "\(order)")
    }

    @Test("turning shuffle on puts the entries with priorities first; off, the order they had comes back")
    func shuffleOnWithPriorities() {
        let player = QueuePlayer.ofJoinItems(12)
        let queued = player.entries()
        player.setPriority(2, of: [queued[9]])
        player.setPriority(200, of: [queued[4]])
        player.shuffleMode = .items
        let order = player.entries()
        #expect(order[1] == queued[4] && order[2] == queued[9], "\(order)")
        player.shuffleMode = .off
        #expect(player.entries() == queued)
        #expect(player.priorities() == [queued[9].id: 2, queued[4].id: 200])
    }

    @Test("an entry's priority is cleared when it becomes current, and when it leaves the queue")
    func clearedWhenCurrent() {
        let player = QueuePlayer.ofJoinItems(4)
        let queued = player.entries()
        player.setPriority(7, of: [queued[1], queued[3]])
        player.advanceToNextItem()
        #expect(player.priorities() == [queued[3].id: 7])
        player.remove(queued[3])
        #expect(player.priorities().isEmpty)
    }

    @Test("a restored queue keeps its order and priorities, shuffled or not")
    func restored() {
        let source = QueuePlayer.ofJoinItems(6)
        let saved = source.entries()
        let player = QueuePlayer(sink: NullSink(pacing: .unpaced), logger: quietLogger)
        player.shuffleMode = .items
        player.restore(saved, startingAt: .zero, priorities: [saved[0].id: 3, saved[4].id: 8])
        #expect(player.entries() == saved)
        #expect(player.priorities() == [saved[4].id: 8], "the current entry has none")
    }

    @Test("given a priority while shuffled and playing, an item plays next, heard without a break")
    func prioritizedWhilePlaying() throws {
        let sink = SteppedSink()
        let player = QueuePlayer.ofJoinItems(3, sink: sink)
        player.shuffleMode = .items
        player.play()
        var heard = try sink.renderAll(frames: 1024)
        let last = try #require(player.entries().last)
        player.setPriority(1, of: [last])
        #expect(player.entries()[1] == last)
        let next = last.url.deletingPathExtension().lastPathComponent
        let first = try Fixtures.referenceFloat("join-1")
        let second = try Fixtures.referenceFloat(next)
        heard += try sink.renderAll(frames: (first.count + second.count) / 2 - 1024)
        #expect(sampleDifference(heard, first + second) == nil)
    }
}

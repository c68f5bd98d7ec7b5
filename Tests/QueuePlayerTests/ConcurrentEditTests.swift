import Foundation
import Logging
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

@Suite("Queue edits from several tasks at once", .tier(.deterministic))
struct ConcurrentEditTests {
    @Test("four tasks appending at once: every entry queued once, each task's entries in its own order")
    func concurrentAppends() async {
        // Playing, with the decoding thread at work, but on a sink whose time moves only when a test steps it: the
        // first item cannot end while the tasks append, however slowly they run (under ThreadSanitizer, on a loaded
        // machine, a real-time sink played the 5 s item out first, and it left the queue).
        let engine = playing([Fixtures.mp3("stereo-44k-5s")], on: SteppedSink())
        let batches = await withTaskGroup(of: [QueueEntry].self) { group in
            for task in 0..<4 {
                group.addTask {
                    var mine: [QueueEntry] = []
                    for _ in 0..<5 {
                        mine += engine.insert([Fixtures.mp3(task % 2 == 0 ? "join-1" : "join-2")], after: nil)
                        await Task.yield()
                    }
                    return mine
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let queue = engine.queue()
        engine.shutdown()
        #expect(queue.count == 21)
        #expect(Set(queue.map(\.id)).count == 21)
        for batch in batches {
            let positions = batch.compactMap { queue.firstIndex(of: $0) }
            #expect(positions.count == 5 && positions == positions.sorted())
        }
    }

    @Test("two clients queueing the same item at once: it is queued once, every time")
    func sameItemFromTwoThreads() {
        // `insert(_:after:)` checks that the item is not queued and queues it in one transition: checked and queued
        // apart, both threads saw it missing and queued it twice (most rounds of a run).
        let player = QueuePlayer(sink: NullSink(pacing: .unpaced), logger: quietLogger)
        let rounds = 300
        for _ in 0..<rounds {
            let item = PlayerItem(url: Fixtures.mp3("join-1"))
            DispatchQueue.concurrentPerform(iterations: 2) { _ in player.insert(item, after: nil) }
        }
        let items = player.items()
        player.shutdown()
        #expect(items.count == rounds)
        #expect(Set(items).count == rounds)
        #expect(player.entryCount == rounds)
    }
}

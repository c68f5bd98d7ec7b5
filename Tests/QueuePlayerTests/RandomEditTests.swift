import Foundation
import Logging
import TestSupport
import Testing

@testable import QueuePlayer

/// SplitMix64: a small generator with a fixed seed, so a failing sequence can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Randomized queue edits while playing")
struct RandomEditTests {
    @Test(
        "random inserts, removes and skips: the queue is always what the edits say; nothing plays twice or is skipped",
        arguments: [UInt64(7), 1_234, 99_991])
    func randomEdits(seed: UInt64) async throws {
        var random = SeededGenerator(state: seed)
        let names = ["join-1", "join-2", "join-3"]
        let engine = playing(names.map(Fixtures.mp3), on: NullSink(pacing: .realTime))
        let collector = Task { await remainingEventsWithIDs(of: engine) }
        for step in 0..<12 {
            try await Task.sleep(for: .milliseconds(40))
            let before = engine.queue()
            var expected = before
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                let position = before.isEmpty ? nil : before.randomElement(using: &random)
                let added = engine.insert([Fixtures.mp3(names.randomElement(using: &random)!)], after: position)
                let index = position.flatMap { before.firstIndex(of: $0) }.map { $0 + 1 } ?? before.count
                expected.insert(contentsOf: added, at: index)
            case 1:
                guard let victim = before.randomElement(using: &random) else { continue }
                engine.remove(victim)
                expected.removeAll { $0 == victim }
            default:
                engine.advanceToNextItem()
                expected = Array(before.dropFirst())
            }
            let after = engine.queue()
            // The first item may have finished on its own between the two looks.
            #expect(after == expected || after == Array(expected.dropFirst()), "step \(step) (seed \(seed))")
            // Keep the rest of the run short: at most four items left to play.
            while engine.queue().count > 4, let last = engine.queue().last { engine.remove(last) }
        }
        let remaining = engine.queue()
        let deadline = ContinuousClock.now + .seconds(20)
        while !engine.queue().isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(100))
        engine.shutdown()
        let (started, finished) = await collector.value
        #expect(Set(started).count == started.count, "an entry started twice: \(started)")
        #expect(Array(started.suffix(remaining.count)) == remaining.map(\.id), "the last items did not all play")
        #expect(Array(finished.suffix(remaining.count)) == remaining.map(\.id))
    }
}

@Suite("Queue edits from several tasks at once")
struct ConcurrentEditTests {
    @Test("four tasks appending at once: every entry queued once, each task's entries in its own order")
    func concurrentAppends() async {
        let engine = playing([Fixtures.mp3("stereo-44k-5s")], on: NullSink(pacing: .realTime))
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
}

/// The ids of entries started and finished, in order, until the engine shuts down (the queue may empty and fill
/// again on the way).
func remainingEventsWithIDs(of engine: PlaybackEngine) async -> (started: [Int], finished: [Int]) {
    var started: [Int] = []
    var finished: [Int] = []
    for await event in engine.events {
        switch event {
        case .itemStarted(let info): started.append(info.entry.id)
        case .itemFinished(let entry): finished.append(entry.id)
        default: break
        }
    }
    return (started, finished)
}

import QueuePlayerService
import TestTiers
import Testing

/// A folder is queued in the order a person reads its names.
@Suite("Natural order of file names", .tier(.deterministic))
struct NaturalOrderTests {
    @Test("numbers compare by value, letters without case, and ties fall back to the names themselves")
    func ordersAsAPersonReads() {
        let names = [
            "10-c.mp3", "2-b.MP3", "1-a.mp3", "disc 2/1.mp3", "Disc 1/10.mp3", "disc 1/9.mp3", "02-b.mp3", "b.mp3",
            "A.mp3", "a.mp3",
        ]
        #expect(
            NaturalOrder.sorted(names) == [
                "1-a.mp3", "2-b.MP3", "02-b.mp3", "10-c.mp3", "A.mp3", "a.mp3", "b.mp3", "disc 1/9.mp3",
                "Disc 1/10.mp3", "disc 2/1.mp3",
            ])
    }

    @Test("10,000 names numbered without leading zeros come out in numeric order")
    func manyNumberedNames() {
        let names = (1...10_000).map { "track \($0).mp3" }
        #expect(NaturalOrder.sorted(names.shuffled()) == names)
    }
}

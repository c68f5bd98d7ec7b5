import Foundation
import Logging
import QueuePlayer
import TestSupport
import TestTiers
import Testing

@Suite("A sink chosen at run time, or written outside the package", .tier(.deterministic), .timeLimit(.minutes(1)))
struct PublicSinkTests {
    /// A player on `sink` playing `names`, run to the end of its queue; returns what its sink was told.
    private func playToQueueEnd(_ names: [String], on sink: any AudioSink) async -> [PlaybackEvent] {
        let player = QueuePlayer(
            items: names.map { PlayerItem(url: Fixtures.mp3($0)) }, sink: sink, logger: Logger(label: "test.sink"))
        var events = player.playbackEvents().makeAsyncIterator()
        player.play()
        var seen: [PlaybackEvent] = []
        while let event = await events.next() {
            seen.append(event)
            if event == .queueFinished { break }
        }
        player.shutdown()
        return seen
    }

    @Test("a sink of the user's own hears every item, joined sample-exact, and is stopped at shutdown")
    func sinkOfOnesOwn() async throws {
        let sink = RecordingSink()
        let events = await playToQueueEnd(["join-1", "join-2", "join-3"], on: sink)
        #expect(events.filter { if case .itemFinished = $0 { true } else { false } }.count == 3)
        let reference = try ["join-1", "join-2", "join-3"].flatMap { try Fixtures.referenceFloat($0) }
        #expect(sampleDifference(sink.recording, reference) == nil)
    }

    @Test("the sink is chosen at run time, as `any AudioSink`", arguments: ["recording", "null"])
    func chosenAtRunTime(_ choice: String) async throws {
        let sink: any AudioSink = choice == "null" ? NullSink(pacing: .unpaced) : RecordingSink()
        let events = await playToQueueEnd(["join-1"], on: sink)
        #expect(events.last == .queueFinished, "\(sink.name): \(events)")
    }
}

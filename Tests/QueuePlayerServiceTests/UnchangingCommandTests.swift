import Foundation
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import TestSupport
import TestTiers
import Testing

/// A command that finds the player already as it asks is no event: nothing told, nothing written, the position still.
@Suite("A command that changes nothing is no event", .tier(.deterministic), .timeLimit(.minutes(1)))
struct UnchangingCommandTests {
    @Test("pause while paused: no event, no write, the same position; play resumes from exactly that position")
    func pauseWhilePaused() async throws {
        // Audio time moves only as the test renders: 0.5 s into the item, however loaded the machine.
        let sink = SteppedSink()
        let service = try ServiceHarness(sink: sink)
        service.add("stereo-44k-5s")
        service.run(.play)
        try sink.render(frames: 22_050, deadline: .now() + 10) { _, _ in }
        _ = await service.waitFor { $0.status == .playing && $0.position >= 0.5 }
        let paused = try #require(service.run(.pause).state)
        #expect(paused.status == .paused)
        #expect(abs(paused.position - 0.5) < 0.001)

        let changes = service.controller.changes()
        var told = changes.makeAsyncIterator()
        #expect(await told.next() == paused, "a subscription starts with the paused snapshot")
        let rowsBefore = try service.store.rowsChanged()
        for _ in 0..<3 {
            let again = try #require(service.run(.pause).state)
            #expect(again == paused, "a second pause moved the snapshot")
        }
        #expect(try service.store.rowsChanged() == rowsBefore, "a pause while paused wrote to the store")
        #expect(service.status == paused)

        // The next thing told is the play: the pauses before it were told as nothing.
        service.run(.play)
        let next = await told.next()
        #expect(next?.status == .playing)
        let heard = try sink.renderAll(frames: 4_410)
        let reference = try Fixtures.referenceFloat("stereo-44k-5s")
        let from = 22_050 * 2
        #expect(sampleDifference(heard, Array(reference[from..<from + heard.count])) == nil, "not resumed at 0.5 s")
    }
}

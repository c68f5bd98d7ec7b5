import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import TestSupport
import TestTiers
import Testing

/// The commands that act on what they find (see CommandInterleavingTests for two front ends at once).
@Suite("One command path for every front end", .tier(.deterministic), .timeLimit(.minutes(1)))
struct CommandPathTests {
    @Test("open queues after the current item and plays it now, the current one going to the history")
    func openPlaysNow() async throws {
        let harness = try ServiceHarness(pacing: .realTime)
        let ids = harness.add("stereo-44k-5s", "join-2")
        #expect(harness.run(.open(Fixtures.mp3("join-3").path)).ok == true)
        let queue = harness.controller.queue()
        #expect(queue.map(\.url.lastPathComponent) == ["join-3.mp3", "join-2.mp3"])
        #expect(queue.last?.id == ids.last)
        #expect(harness.player.history().map(\.lastPathComponent) == ["stereo-44k-5s.mp3"])
        #expect(harness.status.status == .playing)
    }

    @Test("a command for an entry that is no longer current is ignored when its turn comes (MPRIS SetPosition)")
    func staleEntryIgnored() async throws {
        let harness = try ServiceHarness(pacing: .realTime)
        let ids = harness.add("stereo-44k-5s", "join-2")
        let stale = harness.controller.execute(.position(2, relative: false), id: nil, ifCurrentEntry: ids[1])
        #expect(stale.ok == true)
        #expect(harness.status.position == 0)
        let current = harness.controller.execute(.position(2, relative: false), id: nil, ifCurrentEntry: ids[0])
        #expect(current.ok == true)
        #expect(harness.status.position == 2)
    }
}

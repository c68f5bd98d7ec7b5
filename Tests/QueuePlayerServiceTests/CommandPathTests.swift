import Dispatch
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import Synchronization
import TestSupport
import TestTiers
import Testing

@Suite("One command path for every front end", .tier(.deterministic), .timeLimit(.minutes(1)))
struct CommandPathTests {
    /// Runs `body` on two threads at once, `rounds` times on each, as two front ends (the socket's event loop and
    /// the D-Bus thread) do.
    private func fromTwoFrontEnds(rounds: Int, _ body: @Sendable () -> Void) {
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            for _ in 0..<rounds { body() }
        }
    }

    @Test("play-pause and relative volume sent from two front ends at once: no toggle and no step is lost")
    func noLostUpdate() async throws {
        let harness = try ServiceHarness(pacing: .realTime)
        harness.add("stereo-44k-5s")
        harness.run(.volume(0.25, relative: false))
        #expect(harness.status.status == .paused)
        // An even number of toggles ends where it began; a toggle lost to a read and an act in two steps (both
        // front ends read Paused, both play) leaves it playing half the time.
        let refused = Atomic<Int>(0)
        fromTwoFrontEnds(rounds: 200) {
            for command in [ControlCommand.playPause, .volume(0.001, relative: true)]
            where harness.run(command).ok != true {
                refused.add(1, ordering: .relaxed)
            }
        }
        #expect(refused.load(ordering: .relaxed) == 0)
        let status = harness.status
        #expect(status.status == .paused)
        #expect(abs(status.volume - 0.65) < 1e-4, "400 steps of 0.001 from 0.25")
    }

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

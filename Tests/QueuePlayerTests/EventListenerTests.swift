import Synchronization
import TestTiers
import Testing

@testable import QueuePlayer

/// The engine tells its player every event for as long as it runs: months, for a daemon.
@Suite("PlaybackEngine: the event listener over a long run", .tier(.deterministic))
struct EventListenerTests {
    @Test("200,000 events reach the listener, and nothing builds up per event")
    func manyEvents() {
        let engine = PlaybackEngine(sink: NullSink(pacing: .unpaced), logger: quietLogger)
        let heard = Atomic<Int>(0)
        engine.listen { _ in heard.add(1, ordering: .relaxed) }
        // When the listener was a bare closure in a Mutex, every post wrapped it in two more thunks: in the debug
        // build the tests run in, the stack overflowed within 20,000 events and this test crashed; in a release
        // build each post got slower than the last.
        for _ in 0..<200_000 { engine.post(.queueFinished) }
        engine.shutdown()
        #expect(heard.load(ordering: .relaxed) == 200_000)
    }
}

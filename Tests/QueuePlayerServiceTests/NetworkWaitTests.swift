import Foundation
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import TestSupport
import TestTiers
import Testing

/// What `status` says while a remote item's server is asked again. A port on loopback that nothing listens on.
@Suite("Waiting for a server: status names it", .tier(.deterministic), .timeLimit(.minutes(1)))
struct NetworkWaitTests {
    @Test("while a station's server refuses, status says which server, why, and when it is asked next")
    func waitingSaysWhatFor() async throws {
        let port = try LoopbackPort.free()
        let service = try ServiceHarness()
        service.run(.add(["http://127.0.0.1:\(port)/live.mp3"]))
        service.run(.play)
        let waiting = await service.waitFor { $0.waiting?.hasPrefix("reconnecting") == true }?.waiting
        let expected = "reconnecting to 127.0.0.1:\(port): connection refused, next try in "
        #expect(waiting?.hasPrefix(expected) == true, "\(waiting ?? "nothing")")
        #expect(service.status.status == .playing)
        service.run(.next)
        let after = await service.waitFor { $0.waiting?.hasPrefix("reconnecting") != true }
        #expect(after?.waiting == nil || after?.waiting == "no item to play", "\(after?.waiting ?? "nothing")")
    }
}

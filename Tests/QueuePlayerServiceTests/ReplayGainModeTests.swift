import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import TestSupport
import TestTiers
import Testing

/// The socket's `replaygain`: one transition of the player's `replayGainMode`, told in the state and kept in the
/// state store, as mpd keeps its settings across a restart.
@Suite("ReplayGain through the daemon's core", .tier(.deterministic), .timeLimit(.minutes(1)))
struct ReplayGainModeTests {
    @Test("replaygain sets the player's mode, which the state tells; without a mode it only reports")
    func setAndReport() throws {
        let service = try ServiceHarness()
        #expect(service.status.replayGain == .off)
        #expect(service.run(.replayGain(.track)).state?.replayGain == .track)
        #expect(service.run(.replayGain(nil)).state?.replayGain == .track)
        #expect(service.run(.replayGain(.auto)).state?.replayGain == .auto)
        #expect(service.status.replayGain == .auto)
    }

    @Test("the mode outlives a restart")
    func acrossRestart() throws {
        let store = try StateStore()
        for mode in [ReplayGain.album, .off] {
            do {
                let first = try ServiceHarness(store: store)
                first.add("join-1")
                #expect(first.run(.replayGain(mode)).state?.replayGain == mode)
            }
            let second = try ServiceHarness(store: store)
            #expect(second.controller.restore())
            #expect(second.status.replayGain == mode)
        }
    }
}

import Foundation
import QueuePlayerControl
import TestTiers
import Testing

@testable import playerctl

/// When the Snapcast plug-in tells snapserver of a state: a seek always, time passing never.
@Suite("Snapcast plug-in: which states are news", .tier(.deterministic))
struct SnapcastPropertiesTests {
    private func properties(_ status: PlaybackState, at position: Double, jumps: Int) -> SnapcastProperties {
        SnapcastProperties(PlayerSnapshot(status: status, position: position, volume: 1, current: nil, jumps: jumps))
    }

    @Test("playing, a seek of a fifth of a second is news; the position time moved is not")
    func playingSeek() {
        let told = properties(.playing, at: 10, jumps: 1)
        #expect(properties(.playing, at: 10, jumps: 2).isNews(after: told, elapsed: 0.2))
        #expect(!properties(.playing, at: 10.2, jumps: 1).isNews(after: told, elapsed: 0.2))
    }

    @Test("playing, a position that stood while time went on is news; paused, any change is")
    func drift() {
        let stood = properties(.playing, at: 10, jumps: 1)
        #expect(stood.isNews(after: properties(.playing, at: 10, jumps: 1), elapsed: 2))
        #expect(properties(.paused, at: 3.25, jumps: 1).isNews(after: properties(.paused, at: 3, jumps: 1), elapsed: 1))
        #expect(!properties(.paused, at: 3, jumps: 1).isNews(after: properties(.paused, at: 3, jumps: 1), elapsed: 1))
    }

    @Test("the count of seeks is not sent to snapserver")
    func jumpsNotEncoded() throws {
        let json = String(decoding: try JSONEncoder().encode(properties(.playing, at: 1, jumps: 7)), as: UTF8.self)
        #expect(json.contains("\"position\":1") && !json.contains("jumps"), "\(json)")
    }
}

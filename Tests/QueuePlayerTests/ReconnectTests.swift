import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

@Suite("One reconnection policy: waits that grow to a cap, a live stream never given up", .tier(.deterministic))
struct ReconnectPolicyTests {
    @Test("the waits double from 0.1 s to the 2 s cap, each drawn from the last quarter below its value")
    func waitsGrowToTheCap() {
        func waits(jitter: Double) -> [Duration] {
            (1...8).map { failures in
                guard
                    case .retry(let wait) = ReconnectPolicy.decide(
                        failures: failures, lostFor: .seconds(1), isLive: false, jitter: jitter)
                else { return .zero }
                return wait
            }
        }
        let full: [Duration] = [
            .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1_600),
            .seconds(2), .seconds(2), .seconds(2),
        ]
        #expect(waits(jitter: 1) == full)
        #expect(waits(jitter: 0) == full.map { $0 * 0.75 })
        #expect(zip(waits(jitter: 0.5), full).allSatisfy { $0 > $1 * 0.75 && $0 < $1 })
    }

    @Test("a live stream is tried again after any number of failures and any length of outage")
    func liveNeverGivesUp() {
        for (failures, lostFor) in [(6, Duration.seconds(4)), (52, .seconds(26)), (1_000_000, .seconds(90 * 86_400))] {
            let decision = ReconnectPolicy.decide(failures: failures, lostFor: lostFor, isLive: true, jitter: 1)
            #expect(decision == .retry(after: .seconds(2)), "after \(failures) failures over \(lostFor)")
        }
    }

    @Test("a finite item is given up once no byte of it came for 60 s, however few the attempts")
    func finiteItemGivesUpAfterItsPatience() {
        let patience = ReconnectPolicy.finiteItemPatience
        #expect(patience == .seconds(60))
        #expect(
            ReconnectPolicy.decide(failures: 40, lostFor: patience - .milliseconds(1), isLive: false, jitter: 1)
                == .retry(after: .seconds(2)))
        #expect(ReconnectPolicy.decide(failures: 2, lostFor: patience, isLive: false, jitter: 1) == .giveUp)
    }
}

/// Real time: the outage lasts longer than the 25 s after which the station used to be given up. In-process server.
@Suite("A live station through a long outage", .tier(.servers), .timeLimit(.minutes(1)))
struct LiveOutageTests {
    @Test("a station that answers 503 for 27 s is asked for all along and heard within 3 s of answering again")
    func stationComesBack() async throws {
        var station = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("join-1"))))
        station.isLive = true
        let server = try await HTTPTestServer(routes: ["/live.mp3": station])
        let live = PlayerItem(url: server.url("/live.mp3"))
        let player = QueuePlayer(items: [live], sink: NullSink(pacing: .unpaced), logger: quietLogger)
        var events = player.playbackEvents().makeAsyncIterator()
        player.play()
        _ = await server.requests(atLeast: 1)
        var down = HTTPTestServer.Route(body: [])
        down.status = "503 Service Unavailable"
        server.setRoute("/live.mp3", down)
        // The outage itself: how long the server refuses is the fault this test makes, not a wait for the player.
        try await Task.sleep(for: .seconds(27))
        let askedWhileDown = server.requests.count - 1
        server.setRoute("/live.mp3", station)
        let answering = ContinuousClock.now
        var gap: Double?
        events: while gap == nil, let event = await events.next() {
            switch event {
            case .liveGap(_, let seconds):
                // Each end of the station's body before the outage is a short gap too: it is asked for again at once.
                if seconds >= 1 { gap = seconds }
            case .itemFailed(_, let error):
                Issue.record("the station was given up: \(error)")
                break events
            default:
                continue
            }
        }
        let heardAfter = ContinuousClock.now - answering
        let seconds = try #require(gap)
        #expect(seconds >= 27, "the gap told: \(seconds) s")
        #expect(heardAfter <= ReconnectPolicy.longestWait + .seconds(1), "heard again \(heardAfter) after answering")
        // Asked for through the outage: about 18 times at waits growing to 2 s (the old waits asked 51 times).
        #expect(askedWhileDown >= 12, "\(askedWhileDown) requests while down")
        #expect(player.currentItem === live)
        player.pause()
        try await server.stop()
    }
}

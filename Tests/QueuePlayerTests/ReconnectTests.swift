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
                        failures: failures, lostFor: .seconds(1), item: .finite, jitter: jitter)
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
            let decision = ReconnectPolicy.decide(failures: failures, lostFor: lostFor, item: .live, jitter: 1)
            #expect(decision == .retry(after: .seconds(2)), "after \(failures) failures over \(lostFor)")
        }
    }

    @Test("a finite item is given up once no byte of it came for 60 s, however few the attempts")
    func finiteItemGivesUpAfterItsPatience() {
        let patience = ReconnectPolicy.finiteItemPatience
        #expect(patience == .seconds(60))
        #expect(
            ReconnectPolicy.decide(failures: 40, lostFor: patience - .milliseconds(1), item: .finite, jitter: 1)
                == .retry(after: .seconds(2)))
        #expect(ReconnectPolicy.decide(failures: 2, lostFor: patience, item: .finite, jitter: 1) == .giveUp)
    }

    @Test("a server that never answered is asked for until it does while nothing follows, else for 10 s")
    func unansweredItemWaitsWhileNothingFollows() {
        let patience = ReconnectPolicy.unansweredItemPatience
        #expect(patience == .seconds(10))
        let alone = ReconnectPolicy.Item.unanswered(hasItemAfter: false)
        let followed = ReconnectPolicy.Item.unanswered(hasItemAfter: true)
        #expect(ReconnectPolicy.decide(failures: 500, lostFor: .seconds(3_600), item: alone, jitter: 1) != .giveUp)
        #expect(
            ReconnectPolicy.decide(failures: 9, lostFor: patience - .milliseconds(1), item: followed, jitter: 1)
                == .retry(after: .seconds(2)))
        #expect(ReconnectPolicy.decide(failures: 9, lostFor: patience, item: followed, jitter: 1) == .giveUp)
    }

    @Test("a loss says which server, why and when it is asked next")
    func lossDescription() {
        let loss = ConnectionLoss(
            server: "radio.example.org:8000", reason: "connection refused", failedAttempts: 3,
            nextAttemptIn: .milliseconds(400))
        #expect("\(loss)" == "reconnecting to radio.example.org:8000: connection refused, next try in 0.4 s")
        let longer = ConnectionLoss(
            server: "radio.example.org", reason: "cannot resolve the host name", failedAttempts: 9,
            nextAttemptIn: .milliseconds(1_900))
        #expect("\(longer)" == "reconnecting to radio.example.org: cannot resolve the host name, next try in 2 s")
        #expect(NetworkFailure.server(of: URL(string: "https://radio.example.org/live.mp3")!) == "radio.example.org")
    }
}

/// Real time: the outage lasts longer than the 25 s after which the station used to be given up. In-process server.
@Suite("A live station through a long outage", .tier(.servers), .timeLimit(.minutes(1)))
struct LiveOutageTests {
    @Test("a station that answers 503 for 27 s is asked for all along, asked within 3 s of answering again, and heard")
    func stationComesBack() async throws {
        var station = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("join-1"))))
        station.isLive = true
        let server = try await HTTPTestServer(routes: ["/live.mp3": station])
        let live = PlayerItem(url: server.url("/live.mp3"))
        let player = QueuePlayer(items: [live], sink: NullSink(pacing: .unpaced), logger: quietLogger)
        var events = player.playbackEvents().makeAsyncIterator()
        player.play()
        // Heard first: an outage that began before the first answer would be one of a station never reached.
        while let event = await events.next() {
            if case .itemStarted = event { break }
        }
        var down = HTTPTestServer.Route(body: [])
        down.status = "503 Service Unavailable"
        server.setRoute("/live.mp3", down)
        let askedBefore = server.requests.count
        // The outage itself: how long the server refuses is the fault this test makes, not a wait for the player.
        try await Task.sleep(for: .seconds(27))
        let askedWhileDown = server.requests.count - askedBefore
        let restoring = ContinuousClock.now
        server.setRoute("/live.mp3", station)
        let answering = ContinuousClock.now
        var gap: Double?
        events: while gap == nil, let event = await events.next() {
            switch event {
            case .liveGap(_, let seconds):
                // Each end of the station's body before the outage is a short gap too, asked for again at once, and
                // those events may still wait to be read here: under ThreadSanitizer one took 1.4 s. The outage's
                // gap is the one of more than 20 s.
                if seconds > 20 { gap = seconds }
            case .itemFailed(_, let error):
                Issue.record("the station was given up: \(error)")
                break events
            default:
                continue
            }
        }
        let seconds = try #require(gap)
        // The silence began when the player found the station gone: after the switch (a body served before it may
        // still have been read), and before its next request, which was refused. It ended after the restore.
        let firstRefused = try #require(server.arrivals.dropFirst(askedBefore).first)
        let outage = (restoring - firstRefused) / .seconds(1)
        #expect(seconds >= outage, "the gap told: \(seconds) s; the station refused for at least \(outage) s")
        #expect(outage > 26, "the first request refused came \(27 - outage) s after the switch")
        let askedAgain = try #require(server.arrivals.first { $0 >= answering })
        #expect(
            askedAgain - answering <= ReconnectPolicy.longestWait + .seconds(1),
            "asked for \(askedAgain - answering) after answering")
        // Asked for through the outage: about 18 times at waits growing to 2 s (the old waits asked 51 times).
        #expect(askedWhileDown >= 12, "\(askedWhileDown) requests while down")
        #expect(player.currentItem === live)
        player.pause()
        try await server.stop()
    }

    @Test("a station refused at start is asked for until it answers, saying why meanwhile, asked within 3 s, heard")
    func stationUnreachableAtStart() async throws {
        let port = try LoopbackPort.free()
        let live = PlayerItem(url: URL(string: "http://127.0.0.1:\(port)/live.mp3")!)
        let player = QueuePlayer(items: [live], sink: NullSink(pacing: .unpaced), logger: quietLogger)
        var losses = player.values(of: \.currentItem?.connectionLoss).makeAsyncIterator()
        var events = player.playbackEvents().makeAsyncIterator()
        player.play()
        // Refused for 8 attempts (about 5 s of waits growing to the cap): the old code failed the item at the first.
        var told: ConnectionLoss?
        while told.map({ $0.failedAttempts < 8 }) ?? true, let loss = await losses.next() {
            if case .failed(let error) = live.status {
                Issue.record("the station was given up: \(error)")
                return
            }
            told = loss ?? told
        }
        let loss = try #require(told)
        #expect(loss.server == "127.0.0.1:\(port)" && loss.reason == "connection refused", "\(loss)")
        #expect(player.timeControlStatus == .waitingToPlayAtSpecifiedRate)
        #expect(player.reasonForWaitingToPlay == .toMinimizeStalls)
        // A burst longer than the 2 s buffering target, as Icecast sends a new listener: what is measured is the wait
        // for the server, not a second connection to fill the buffer (1.5 s of join-1 made one, and under load
        // that took the time past the bound).
        var station = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("stereo-44k-5s"))))
        station.isLive = true
        let server = try await HTTPTestServer(routes: ["/live.mp3": station], port: port)
        let answering = ContinuousClock.now
        // The policy's promise: asked for again within the waits' cap of answering, as the server saw it. This task,
        // resumed on the busy test pool, ran up to 3.4 s after the request came (two busy loops beside the tests).
        // How soon it is heard after that is the benchmark's figure (scripts/bench, "sound back after it answers").
        _ = await server.requests(atLeast: 1)
        let askedAfter = try #require(server.arrivals.first) - answering
        #expect(askedAfter <= ReconnectPolicy.longestWait + .seconds(1), "asked for \(askedAfter) after answering")
        events: while let event = await events.next() {
            switch event {
            case .itemStarted: break events
            case .itemFailed(_, let error):
                Issue.record("the station was given up: \(error)")
                break events
            default: continue
            }
        }
        // The loss ended when the station's bytes came. (The test server's live body ends after one item, and a new
        // loss may begin there: the connection's end, asked for again at once.)
        while let next = await losses.next(), next != nil {}
        #expect(player.currentItem === live)
        player.pause()
        try await server.stop()
    }

    @Test("a server whose connections hang is given up on after the 5 s connect timeout, said so, and asked again")
    func connectTimeout() async throws {
        let stalled = try StalledListener()
        let live = PlayerItem(url: URL(string: "http://127.0.0.1:\(stalled.port)/live.mp3")!)
        let player = QueuePlayer(items: [live], sink: NullSink(pacing: .unpaced), logger: quietLogger)
        var losses = player.values(of: \.currentItem?.connectionLoss).makeAsyncIterator()
        // Before play: the connection, and its timeout, may start before play() returns (they did under
        // ThreadSanitizer, 3 ms before a reading taken after it).
        let started = ContinuousClock.now
        player.play()
        var told: ConnectionLoss?
        while told == nil, let loss = await losses.next() { told = loss }
        #expect(told?.reason == "no connection within 5 s", "\(told.map { "\($0)" } ?? "nothing")")
        #expect(ContinuousClock.now - started >= .seconds(5))
        #expect(live.status == .unknown, "asked again, not given up: \(live.status)")
        player.pause()
        _ = stalled
    }
}

import Dispatch
import Foundation
import Logging
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

@Suite("An item's start time", .tier(.deterministic), .timeLimit(.minutes(1)))
struct StartTimeTests {
    @Test("an item queued with a start time is heard from there after the item before it, and only once")
    func startsWhereItSays() async throws {
        let sink = NullSink(pacing: .unpaced, recordingFrames: 2_000_000)
        let first = PlayerItem(url: Fixtures.mp3("join-1"))
        let second = PlayerItem(url: Fixtures.mp3("sweep-44k-4s"))
        second.startTime = MediaTime(value: 66_150, timescale: 44_100)
        let player = QueuePlayer(items: [first, second], sink: sink, logger: quietLogger)
        var events = player.playbackEvents().makeAsyncIterator()
        player.play()
        while let event = await events.next(), event != .queueFinished {}
        player.shutdown()
        let sweep = try Fixtures.referenceFloat("sweep-44k-4s")
        let expected = try Fixtures.referenceFloat("join-1") + sweep[(66_150 * 2)...]
        #expect(sampleDifference(sink.takeRecording(), Array(expected)) == nil)
        #expect(second.startTime == .zero, "used up once the item was heard from there")
    }
}

@Suite("An item's start time, across an opening given up", .tier(.servers), .timeLimit(.minutes(1)))
struct StartTimeAcrossReopeningTests {
    @Test("an item whose opening is given up while it seeks to its start time starts there when opened again")
    func keptWhenOpeningIsGivenUp() async throws {
        // The first answer goes silent after 300 KB, so that 395 s (about 1.6 MB in) is asked for by range; the
        // answer to that range sends nothing.
        var route = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("episode-8k-10min"))))
        route.silentAfterBytes = [300_000, 0]
        let server = try await HTTPTestServer(routes: ["/episode.mp3": route])
        let episode = PlayerItem(url: server.url("/episode.mp3"))
        episode.startTime = MediaTime(seconds: 395, preferredTimescale: 1)
        let local = PlayerItem(url: Fixtures.mp3("join-1"))
        let player = QueuePlayer(items: [episode, local], sink: NullSink(pacing: .unpaced), logger: quietLogger)
        let (firstHeard, telling) = AsyncStream.makeStream(of: Double.self)
        let observer = player.addPeriodicTimeObserver(
            forInterval: MediaTime(seconds: 1, preferredTimescale: 1), queue: DispatchQueue(label: "heard")
        ) { time in
            // Play reports 0 of the episode, current before the move; the time it is first heard from comes after.
            if player.currentItem === episode, time.seconds > 0 { telling.yield(time.seconds) }
        }
        player.play()
        let ranges = await server.requests(atLeast: 2).compactMap(\.range)
        #expect(ranges.count == 1, "the start asked for by range: \(ranges)")
        // The local item goes first: the episode's opening is given up, and it is opened again after the local one.
        #expect(player.move(try #require(player.entry(for: local)), to: 0))
        var told = firstHeard.makeAsyncIterator()
        let first = await told.next()
        player.removeTimeObserver(observer)
        player.shutdown()
        try await server.stop()
        #expect(first == 395, "the episode was first heard at \(first ?? -1) s")
        #expect(episode.startTime == .zero, "used up once the item was heard from there")
    }
}

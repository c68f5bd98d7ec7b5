import Dispatch
import Foundation
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import Synchronization
import TestSupport
import TestTiers
import Testing

/// Podcast episodes served by an HTTP server of this process, played on a sink whose audio time moves only as the
/// test renders: where each was left is kept by its URL, and it starts there when queued again.
@Suite("Podcast episodes remember where they were left", .tier(.servers), .timeLimit(.minutes(1)))
struct EpisodePositionTests {
    /// Plays `entry` and returns the first time after 0 heard in it, as a periodic observer of 50 ms tells it (its
    /// start first, when it starts part-way). Renders 10 ms at a time until then: the ring may still hold the end of
    /// the item left before, and the item may wait for its server.
    private func heardFrom(_ entry: Int, in service: ServiceHarness, sink: SteppedSink) throws -> Double? {
        let player = service.player
        let item = try #require(player.entries().first { $0.id == entry }.flatMap(player.item(for:)))
        let heard = Mutex<Double?>(nil)
        let interval = MediaTime(seconds: 0.05, preferredTimescale: 1000)
        let observer = player.addPeriodicTimeObserver(forInterval: interval, queue: DispatchQueue(label: "heard")) {
            time in
            guard player.currentItem === item, time.seconds > 0 else { return }
            heard.withLock { $0 = $0 ?? time.seconds }
        }
        defer { player.removeTimeObserver(observer) }
        service.run(.play)
        let deadline = DispatchTime.now() + 10
        while heard.withLock({ $0 }) == nil, DispatchTime.now() < deadline {
            try sink.render(frames: 80, deadline: deadline) { _, _ in }
        }
        return heard.withLock { $0 }
    }

    @Test("left part-way and queued again, an episode resumes 5 s back by a Range request; near its end it is played")
    func resumesWhereLeft() async throws {
        let server = try await HTTPTestServer(routes: [:])
        try server.serve(fixtures: ["episode-8k-10min"])
        let size = try Data(contentsOf: Fixtures.mp3("episode-8k-10min")).count
        let url = server.url("/episode-8k-10min.mp3").absoluteString
        let sink = SteppedSink()
        let service = try ServiceHarness(sink: sink)

        let first = try #require(service.run(.add([url])).added?.first)
        let started = try heardFrom(first, in: service, sink: sink)
        #expect(started.map { $0 < 1 } == true, "a new episode starts at its start: \(started ?? -1)")
        service.run(.position(400, relative: false))
        service.run(.pause)
        service.run(.remove([first]))
        let asked = server.requests.count
        let second = try #require(service.run(.add([url])).added?.first)
        // Before it plays, the queue and the position say where it starts.
        #expect(service.run(.queue).queue?.first { $0.id == second }?.startsAt == 395)
        #expect(service.status.position == 395)
        let resumed = try #require(try heardFrom(second, in: service, sink: sink))
        #expect(resumed >= 394.9 && resumed < 395.5, "resumed at \(resumed) s")
        // The bytes from there on were asked for, not the file from its start up to there.
        let ranges = server.requests.dropFirst(asked).compactMap(\.range)
        let firstBytes = ranges.compactMap { Int($0.dropFirst("bytes=".count).prefix { $0 != "-" }) }
        #expect(firstBytes.contains { $0 > size / 2 }, "\(ranges) of \(size) bytes")

        service.run(.position(590, relative: false))
        service.run(.pause)
        service.run(.remove([second]))
        let third = try #require(service.run(.add([url])).added?.first)
        let again = try heardFrom(third, in: service, sink: sink)
        #expect(again.map { $0 < 1 } == true, "left within its last minute, it was played: \(again ?? -1)")
        service.run(.pause)
        try await server.stop()
    }
}

@Suite("Podcast episodes in a restored queue", .tier(.deterministic))
struct EpisodeRestoreTests {
    @Test("a restored queue's first entry starts at the saved position; an episode after it where it was left")
    func restoredEpisodeResumes() throws {
        let store = try StateStore()
        let episode = "http://127.0.0.1:9/episode.mp3"
        let played = "http://127.0.0.1:9/played.mp3"
        try store.saveEpisodePosition(.init(seconds: 125, isPlayed: false), of: episode)
        try store.saveEpisodePosition(.init(seconds: 30, isPlayed: true), of: played)
        let queue = [
            QueueEntry(id: 1, location: Fixtures.mp3("join-1").path), QueueEntry(id: 2, location: episode),
            QueueEntry(id: 3, location: played),
        ]
        try store.saveQueue(queue)
        let service = try ServiceHarness(store: store)
        #expect(service.controller.restore())
        #expect(service.player.item(for: queue[1])?.startTime.seconds == 120)
        #expect(service.player.item(for: queue[2])?.startTime == .zero)
    }
}

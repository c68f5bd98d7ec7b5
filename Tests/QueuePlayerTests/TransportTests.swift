import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// What the daemon and MPRIS need from the player, on the player itself: stop, previous with a history, items
/// loaded while paused, a restored queue cued at its position, and entries named by id.
@Suite("QueuePlayer: stop, previous, history, loading and restoring", .tier(.deterministic), .timeLimit(.minutes(1)))
struct TransportTests {
    /// A player of fixtures; real-time pacing where a test acts while an item plays.
    private func player(_ names: String..., pacing: NullSink.Pacing = .unpaced) -> QueuePlayer {
        QueuePlayer(
            items: names.map { PlayerItem(url: Fixtures.mp3($0)) }, sink: NullSink(pacing: pacing),
            logger: quietLogger, application: Application())
    }

    @Test("a current item not opened yet loads its tags and length on request, and can be sought in, unplayed")
    func loadWhilePaused() async throws {
        let player = player("id3v24-multi", "join-1")
        #expect(player.currentItem?.status == .unknown)
        let item = try #require(player.loadCurrentItem())
        #expect(item.status == .readyToPlay)
        #expect(item.metadata.title == "Duet")
        #expect(item.duration == MediaTime(value: 132_300, timescale: 44_100))
        #expect(player.playbackState == .paused)

        #expect(await player.seek(to: MediaTime(value: 1, timescale: 1)))
        #expect(player.currentTime() == MediaTime(value: 44_100, timescale: 44_100))
        #expect(player.currentItem === item)
        #expect(player.rate == 0)
    }

    @Test("stop pauses at the item's start and reports stopped until play; play starts the item from 0")
    func stop() async throws {
        let player = player("stereo-44k-5s", "join-1", pacing: .realTime)
        await play(player) { player.stop() }
        #expect(player.playbackState == .stopped)
        #expect(player.rate == 0)
        #expect(player.currentTime() == .zero)
        #expect(player.currentItem?.url.lastPathComponent == "stereo-44k-5s.mp3")

        player.play()
        #expect(player.playbackState == .playing)
        player.removeAllItems()
        #expect(player.playbackState == .stopped, "nothing queued")
    }

    @Test("items finished or skipped go into the history; previous plays the newest again, then the current one")
    func previousGoesBackThroughTheHistory() async throws {
        let player = player("join-1", "join-2", "join-3", pacing: .realTime)
        let events = player.playbackEvents()
        // join-1 played to its end, join-2 skipped early on, and join-3 paused at its start, so that it is still
        // current however long a loaded machine takes to resume this test.
        await play(player, inFileNamed: "join-2.mp3") {
            player.advanceToNextItem()
            player.pause()
        }
        #expect(player.history().map(\.lastPathComponent) == ["join-1.mp3", "join-2.mp3"])
        let wasCurrent = try #require(player.currentItem)
        #expect(wasCurrent.url.lastPathComponent == "join-3.mp3")

        player.returnToPreviousItem()
        #expect(player.history().map(\.lastPathComponent) == ["join-1.mp3"])
        #expect(player.entries().map(\.url.lastPathComponent) == ["join-2.mp3", "join-3.mp3"])
        #expect(player.items().last === wasCurrent, "the item that was current follows, the same object")
        player.play()
        // Heard again: its second start (what is current once it is heard depends on how soon this task runs).
        var starts = 0
        for await event in events {
            guard case .itemStarted(let info) = event, info.entry.url.lastPathComponent == "join-2.mp3" else {
                continue
            }
            starts += 1
            if starts == 2 { break }
        }
        #expect(starts == 2, "join-2 was not heard again")
    }

    @Test("previous with no history starts the current item again; the history keeps the newest 1,000")
    func previousWithoutHistory() throws {
        let player = player("join-1", "join-2")
        _ = player.seek(to: MediaTime(value: 1, timescale: 1))
        _ = player.loadCurrentItem()
        #expect(player.currentTime() == MediaTime(value: 44_100, timescale: 44_100))
        player.returnToPreviousItem()
        #expect(player.currentTime() == .zero)
        #expect(player.entries().count == 2)

        let many = (0..<1_005).map { URL(fileURLWithPath: "/music/\($0).mp3") }
        player.restoreHistory(many)
        #expect(player.history() == Array(many.suffix(QueuePlayer.historyLimit)))
    }

    @Test("a restored queue keeps its ids and is cued at the saved frame; play announces the item from there")
    func restore() async throws {
        let player = QueuePlayer(sink: NullSink(pacing: .realTime), logger: quietLogger, application: Application())
        // Held at its end, the item stays current: a test task resumed late reads its length, not the next item's time.
        player.actionAtItemEnd = .pause
        let saved = [
            QueueEntry(id: 7, url: Fixtures.mp3("stereo-44k-5s")), QueueEntry(id: 9, url: Fixtures.mp3("join-1")),
        ]
        player.restore(saved, startingAt: MediaTime(value: 88_200, timescale: 44_100))
        #expect(player.entries() == saved)
        #expect(player.entry(for: try #require(player.currentItem)) == saved[0])
        #expect(player.currentTime() == MediaTime(value: 88_200, timescale: 44_100))
        let added = player.insert([Fixtures.mp3("join-2")], after: nil)
        #expect(added.map(\.id) == [10])

        let times = player.playbackEvents()
        player.play()
        for await event in times {
            if case .itemStarted(let info) = event {
                #expect(info.entry == saved[0])
                break
            }
        }
        #expect(player.currentTime() >= MediaTime(value: 88_200, timescale: 44_100))
    }

    @Test("a position saved at one rate is cued at the same time when the output plays the item at another")
    func restoreAcrossRates() async throws {
        let sink = NullSink(pacing: .realTime, outputSampleRate: 48_000)
        let player = QueuePlayer(sink: sink, logger: quietLogger, application: Application())
        // Held at its end, the item stays current with its length as its time: a test task that a loaded machine
        // resumes after the last 3 s were heard (as a parallel ThreadSanitizer run once did) reads 5 s, not the
        // zero of an empty player.
        player.actionAtItemEnd = .pause
        player.restore(
            [QueueEntry(id: 1, url: Fixtures.mp3("stereo-44k-5s"))],
            startingAt: MediaTime(value: 88_200, timescale: 44_100))
        #expect(player.currentTime() == MediaTime(value: 2, timescale: 1))
        let events = player.playbackEvents()
        let playedAt = ContinuousClock.now
        player.play()
        for await event in events {
            if case .itemStarted(let info) = event {
                #expect(info.format == .stereo(sampleRate: 48_000))
                break
            }
        }
        let time = player.currentTime()
        let playing = ContinuousClock.now - playedAt
        #expect(time.timescale == 48_000)
        // The item starts 96,000 frames in at 48 kHz (2 s), not 88,200 (1.84 s); since then it has played for no
        // longer than the test's clock has run (however slow a sanitizer makes the way here).
        let playedSeconds = playing.inSeconds
        #expect(time >= MediaTime(value: 96_000, timescale: 48_000))
        #expect(time.seconds <= 2 + playedSeconds + 0.05, "\(time.seconds) s after \(playedSeconds) s of play")
        player.shutdown()
    }
}

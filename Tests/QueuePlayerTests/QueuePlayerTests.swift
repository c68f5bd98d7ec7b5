import Dispatch
import Foundation
import Logging
import Synchronization
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// Lines that observers write.
typealias Transcript = Collected<String>

/// Waits for `count` notifications matching `matches`.
func waitForNotifications(
    _ player: QueuePlayer, _ stream: AsyncStream<QueuePlayer.Notification>, count: Int,
    matching matches: (QueuePlayer.Notification) -> Bool
) async -> [QueuePlayer.Notification] {
    var seen: [QueuePlayer.Notification] = []
    for await notification in stream where matches(notification) {
        seen.append(notification)
        if seen.count == count { break }
    }
    return seen
}

@Suite("QueuePlayer: the AVQueuePlayer API", .tier(.deterministic))
struct QueuePlayerTests {
    @Test("the seed's sample: three items, a current-item label, a 10 ms time observer")
    func seedSample() async throws {
        let items = ["join-1", "join-2", "join-3"].map { PlayerItem(url: Fixtures.mp3($0)) }
        let player = QueuePlayer(items: items, sink: NullSink(pacing: .unpaced), logger: quietLogger)
        let transcript = Transcript()
        _ = player.addCurrentItemObserver(queue: transcript.queue) { item in
            transcript.append("New music name: \(item?.url.lastPathComponent ?? "none")")
        }
        let tick = MediaTime(value: 10, timescale: 1000)
        _ = player.addPeriodicTimeObserver(forInterval: tick, queue: transcript.queue) { time in
            transcript.append(String(Int((time.seconds * 100).rounded())))
        }
        let notifications = player.notifications()
        let changes = player.currentItemChanges()
        #expect(player.timeControlStatus == .paused)
        #expect(player.items() == items)
        player.play()
        let ended = await waitForNotifications(player, notifications, count: 3) {
            if case .didPlayToEndTime = $0 { true } else { false }
        }
        #expect(ended == items.map { .didPlayToEndTime($0) })
        // The current item becomes nil once the queue has run out, and the observers' calls for it (and every time
        // before it) were queued before this stream heard of it: `values` waits for them.
        for await item in changes where item == nil { break }
        let said = transcript.values
        let labels = said.filter { $0.hasPrefix("New music name") }
        #expect(
            labels == [
                "New music name: join-1.mp3", "New music name: join-2.mp3", "New music name: join-3.mp3",
                "New music name: none",
            ])
        let ticks = said.filter { !$0.hasPrefix("New") }
        let perItem: [String] = (0..<150).map { String($0) }
        let expectedTicks: [String] = perItem + perItem + perItem
        #expect(ticks == expectedTicks)
        #expect(items.allSatisfy { $0.status == .readyToPlay })
        #expect(items.map(\.duration) == Array(repeating: MediaTime(value: 66_150, timescale: 44_100), count: 3))
        #expect(player.currentItem == nil)
        #expect(player.timeControlStatus == .waitingToPlayAtSpecifiedRate)
        #expect(player.reasonForWaitingToPlay == .noItemToPlay)
    }

    @Test("the same item cannot be queued twice; insert, remove and items() follow AVQueuePlayer")
    func queueOperations() {
        let a = PlayerItem(url: Fixtures.mp3("join-1"))
        let b = PlayerItem(url: Fixtures.mp3("join-2"))
        let c = PlayerItem(url: Fixtures.mp3("join-3"))
        let player = QueuePlayer(items: [a, c], sink: NullSink(pacing: .unpaced), logger: quietLogger)
        #expect(!player.canInsert(a, after: nil))
        #expect(!player.canInsert(b, after: PlayerItem(url: Fixtures.mp3("join-1"))))
        player.insert(b, after: a)
        #expect(player.items() == [a, b, c])
        player.insert(a, after: c)
        #expect(player.items() == [a, b, c], "a queued item is not inserted again")
        player.remove(b)
        #expect(player.items() == [a, c])
        player.removeAllItems()
        #expect(player.items().isEmpty)
        #expect(player.currentItem == nil)
    }

    @Test("a bad item fails with its error and a notification; the queue goes on")
    func failedItem() async {
        let good = PlayerItem(url: Fixtures.mp3("join-1"))
        let bad = PlayerItem(url: Fixtures.mp3("not-audio"))
        let player = QueuePlayer(items: [bad, good], sink: NullSink(pacing: .unpaced), logger: quietLogger)
        let notifications = player.notifications()
        player.play()
        let seen = await waitForNotifications(player, notifications, count: 2) { _ in true }
        guard case .failedToPlayToEndTime(let failed, let error) = seen.first else {
            Issue.record("expected a failure first, got \(seen)")
            return
        }
        #expect(failed === bad && error.code == .notMPEGAudio)
        #expect(bad.status == .failed(error))
        #expect(seen.last == .didPlayToEndTime(good))
    }

    @Test("an item and its entry name the file they were made from, whatever the name holds, and it plays")
    func oddFileNames() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("queueplayer-names-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("a b#c%20d?é.mp3")
        try FileManager.default.copyItem(at: Fixtures.mp3("join-1"), to: url)
        let item = PlayerItem(url: url)
        let player = QueuePlayer(items: [item], sink: NullSink(pacing: .unpaced), logger: quietLogger)
        let entry = try #require(player.entry(for: item))
        #expect(item.url == url && entry.url == url)
        #expect(item.location == url.path && entry.location == url.path && entry.displayName == "a b#c%20d?é.mp3")
        let notifications = player.notifications()
        player.play()
        let seen = await waitForNotifications(player, notifications, count: 1) { _ in true }
        #expect(seen == [.didPlayToEndTime(item)])
        #expect(item.status == .readyToPlay && item.duration.seconds > 0)
    }
    @Test("seek moves the current item's time exactly and posts time jumped")
    func seek() async throws {
        let item = PlayerItem(url: Fixtures.mp3("stereo-44k-5s"))
        let player = QueuePlayer(items: [item], sink: NullSink(pacing: .realTime), logger: quietLogger)
        let changes = player.currentItemChanges()
        let notifications = player.notifications()
        var iterator = changes.makeAsyncIterator()
        await playThenPause(player)
        #expect(await iterator.next() == item)
        #expect(player.seek(to: MediaTime(value: 3, timescale: 1)))
        let jumped = await waitForNotifications(player, notifications, count: 1) { _ in true }
        #expect(jumped == [.timeJumped(item)])
        #expect(player.currentTime() == MediaTime(value: 132_300, timescale: 44_100))
        #expect(item.currentTime() == MediaTime(value: 3, timescale: 1))
        #expect(player.timeControlStatus == .paused)
        player.play()
        #expect(player.timeControlStatus == .playing)
    }

    @Test("actionAtItemEnd .pause stops at the end with the item current, nothing of the next heard; advance goes on")
    func pauseAtItemEnd() async throws {
        // Audio time moves only as the test renders: the first item is heard to its last frame and no further, and
        // the player pauses its output before it posts the end, so that nothing of the next can follow.
        let first = PlayerItem(url: Fixtures.mp3("join-1"))
        let second = PlayerItem(url: Fixtures.mp3("join-2"))
        let sink = SteppedSink()
        let player = QueuePlayer(items: [first, second], sink: sink, logger: quietLogger)
        player.actionAtItemEnd = .pause
        let notifications = player.notifications()
        player.play()
        let firstReference = try Fixtures.referenceFloat("join-1")
        let heardFirst = try sink.renderAll(frames: firstReference.count / 2)
        #expect(await waitForNotifications(player, notifications, count: 1) { _ in true } == [.didPlayToEndTime(first)])
        #expect(sink.streamIsPaused == true, "the output is paused at the end, before the end is posted")
        #expect(player.rate == 0)
        #expect(player.timeControlStatus == .paused)
        #expect(player.currentItem === first)
        #expect(player.currentTime() == first.duration)
        #expect(sampleDifference(heardFirst, firstReference) == nil)

        player.advanceToNextItem()
        #expect(player.currentItem === second && player.currentTime() == .zero && player.rate == 0)
        #expect(player.history() == [first.url], "the item heard is remembered once, the one made current not at all")
        player.play()
        let secondReference = try Fixtures.referenceFloat("join-2")
        let heardSecond = try sink.renderAll(frames: secondReference.count / 2)
        #expect(
            await waitForNotifications(player, notifications, count: 1) { _ in true } == [.didPlayToEndTime(second)])
        #expect(sampleDifference(heardSecond, secondReference) == nil, "the next item is heard from its first frame")
        #expect(player.currentItem === second, "the last item stays current at its end")
        #expect(player.rate == 0)
        player.advanceToNextItem()
        #expect(player.currentItem == nil && player.playbackState == .stopped, "past the last item, nothing is current")
        #expect(player.history() == [first.url, second.url])
    }

    @Test("actionAtItemEnd .none holds at the end with the rate unchanged; switching to .advance goes on")
    func noneAtItemEnd() async throws {
        // Audio time moves only as the test renders: the first item is heard to its end and the engine's state says
        // it holds there, which only a command ends; the next item is then heard from its first frame.
        let first = PlayerItem(url: Fixtures.mp3("join-1"))
        let second = PlayerItem(url: Fixtures.mp3("join-2"))
        let sink = SteppedSink()
        let player = QueuePlayer(items: [first, second], sink: sink, logger: quietLogger)
        player.actionAtItemEnd = .none
        let notifications = player.notifications()
        player.play()
        let firstReference = try Fixtures.referenceFloat("join-1")
        let heardFirst = try sink.renderAll(frames: firstReference.count / 2)
        #expect(await waitForNotifications(player, notifications, count: 1) { _ in true } == [.didPlayToEndTime(first)])
        #expect(sampleDifference(heardFirst, firstReference) == nil)
        #expect(player.engine.state.withLock { $0.isHoldingAtItemEnd }, "decoding holds at the end of the first item")
        #expect(sink.streamIsPaused == false, "the output is not paused: the rate is unchanged")
        #expect(player.rate == 1)
        #expect(player.currentItem === first)
        #expect(player.currentTime() == first.duration)
        #expect(player.items() == [first, second], "the current item, held at its end, is still listed")
        player.actionAtItemEnd = .advance
        let secondReference = try Fixtures.referenceFloat("join-2")
        let heardSecond = try sink.renderAll(frames: secondReference.count / 2)
        #expect(
            await waitForNotifications(player, notifications, count: 1) { _ in true } == [.didPlayToEndTime(second)])
        #expect(sampleDifference(heardSecond, secondReference) == nil, "the next item is heard from its first frame")
    }

    @Test("volume scales what is played exactly; mute silences it and keeps the volume")
    func volumeAndMute() async throws {
        let items = ["join-1", "join-2"].map { PlayerItem(url: Fixtures.mp3($0)) }
        let sink = SteppedSink()
        let player = QueuePlayer(items: items, sink: sink, logger: quietLogger)
        player.volume = 0.25
        player.actionAtItemEnd = .pause
        let notifications = player.notifications()
        player.play()
        let quarter = try Fixtures.referenceFloat("join-1").map { $0 * 0.25 }
        #expect(sampleDifference(try sink.renderAll(frames: quarter.count / 2), quarter) == nil)
        _ = await waitForNotifications(player, notifications, count: 1) { _ in true }
        player.isMuted = true
        #expect(player.volume == 0.25)
        player.advanceToNextItem()
        player.play()
        let muted = try sink.renderAll(frames: 66_150)
        _ = await waitForNotifications(player, notifications, count: 1) { _ in true }
        #expect(muted.count == 66_150 * 2 && muted.allSatisfy { $0 == 0 })
    }

    @Test("an awaited seek returns true once playback restarted there; every seek's completion runs exactly once")
    func awaitedSeek() async throws {
        let item = PlayerItem(url: Fixtures.mp3("stereo-44k-5s"))
        let player = QueuePlayer(items: [item], sink: NullSink(pacing: .realTime), logger: quietLogger)
        let changes = player.currentItemChanges()
        var iterator = changes.makeAsyncIterator()
        await playThenPause(player)
        #expect(await iterator.next() == item)
        let replaced = Transcript()
        let (completions, completed) = AsyncStream.makeStream(of: Bool.self)
        player.seek(to: MediaTime(value: 1, timescale: 1), queue: replaced.queue) {
            replaced.append("\($0)")
            completed.yield($0)
        }
        #expect(await player.seek(to: MediaTime(value: 4, timescale: 1)))
        // The first seek finished (true) or was replaced by the second (false), depending on the decoding thread.
        var firstCompletions = completions.makeAsyncIterator()
        _ = await firstCompletions.next()
        #expect(replaced.values.count == 1)
        #expect(player.currentTime() == MediaTime(value: 176_400, timescale: 44_100))
        let empty = QueuePlayer(sink: NullSink(pacing: .unpaced), logger: quietLogger)
        #expect(await empty.seek(to: .zero) == false)
    }
}

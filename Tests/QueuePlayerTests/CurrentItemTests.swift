import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// The current item is the first of `items()` after every command, also at the seams the soak found: a move to the
/// front, a skip onto a file that cannot be played, and `previous` onto one.
@Suite("QueuePlayer: the current item stays the first queued", .tier(.deterministic), .timeLimit(.minutes(1)))
struct CurrentItemTests {
    private func player(_ names: String...) -> QueuePlayer {
        QueuePlayer(
            items: names.map { PlayerItem(url: Fixtures.mp3($0)) }, sink: NullSink(pacing: .realTime),
            logger: quietLogger, application: Application())
    }

    /// Plays until the first item is heard, then pauses; returns the player's events from its start on.
    private func pausedInFirstItem(_ player: QueuePlayer) async -> AsyncStream<PlaybackEvent>.Iterator {
        let events = player.playbackEvents().makeAsyncIterator()
        await playThenPause(player)
        return events
    }

    /// Waits for the failure of an item.
    private func nextFailure(_ events: inout AsyncStream<PlaybackEvent>.Iterator) async -> QueueEntry? {
        while let event = await events.next() {
            if case .itemFailed(let entry, _) = event { return entry }
        }
        return nil
    }

    @Test("moving another item to the front makes it current at once, before a frame of it is heard")
    func moveToFront() async throws {
        let player = player("join-1", "join-2", "join-3")
        let last = try #require(player.entries().last)
        #expect(player.move(last, to: 0))
        #expect(player.currentItem === player.items().first)
        #expect(player.currentItem.flatMap(player.entry(for:)) == last)
    }

    @Test("a skip onto a file that cannot be played, paused: once it fails, the next item is current")
    func skipOntoUnplayableFile() async throws {
        let player = player("join-1", "not-audio", "join-2")
        var events = await pausedInFirstItem(player)
        player.advanceToNextItem()
        let failed = await nextFailure(&events)
        #expect(failed?.url.lastPathComponent == "not-audio.mp3")
        #expect(player.items().map(\.url.lastPathComponent) == ["join-2.mp3"])
        #expect(player.currentItem === player.items().first, "the failed item stayed current")
        #expect(player.currentItem?.url.lastPathComponent == "join-2.mp3")
    }

    @Test("previous onto a file that cannot be played: it fails alone, and the item that was current is first again")
    func previousOntoUnplayableFile() async throws {
        let player = player("join-1", "join-2")
        player.restoreHistory([Fixtures.mp3("not-audio")])
        var events = await pausedInFirstItem(player)
        let wasCurrent = try #require(player.currentItem)
        player.returnToPreviousItem()
        #expect(await nextFailure(&events)?.url.lastPathComponent == "not-audio.mp3")
        #expect(player.items().map(\.url.lastPathComponent) == ["join-1.mp3", "join-2.mp3"])
        #expect(player.items().first === wasCurrent)
        #expect(player.currentItem === wasCurrent)
    }
}

import Dispatch
import Foundation
import Synchronization
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// A player on an unpaced NullSink with the three 1.5 s join items queued.
private func joinPlayer() -> (QueuePlayer, [PlayerItem]) {
    let items = ["join-1", "join-2", "join-3"].map { PlayerItem(url: Fixtures.mp3($0)) }
    return (QueuePlayer(items: items, sink: NullSink(pacing: .unpaced), logger: quietLogger), items)
}

/// Plays `player` and returns once its queue has been heard to the end (the status turns to waiting, no item).
private func playToEnd(_ player: QueuePlayer) async {
    let statuses = player.values(of: \.timeControlStatus)
    player.play()
    for await status in statuses where status == .waitingToPlayAtSpecifiedRate { break }
}

@Suite("Observation keeps AVFoundation's contract", .tier(.deterministic))
struct ObservationContractTests {
    @Test("at each join: the old item's end, then the current-item change, then the new item's first time")
    func joinOrder() async {
        let (player, _) = joinPlayer()
        let transcript = Collected<String>()
        _ = player.addNotificationObserver(queue: transcript.queue) { notification in
            if case .didPlayToEndTime(let item) = notification { transcript.append("end \(item)") }
        }
        _ = player.addCurrentItemObserver(queue: transcript.queue) { item in
            transcript.append("current \(item.map(\.description) ?? "none")")
        }
        _ = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 10, timescale: 1000), queue: transcript.queue)
        {
            time in
            transcript.append("time \(player.currentItem.map(\.description) ?? "none") \(time.value)")
        }
        await playToEnd(player)
        let said = transcript.values
        let joins = said.filter { !$0.hasPrefix("time") || $0.hasSuffix(" 0") }
        #expect(
            joins == [
                "current join-1.mp3", "time join-1.mp3 0", "end join-1.mp3",
                "current join-2.mp3", "time join-2.mp3 0", "end join-2.mp3",
                "current join-3.mp3", "time join-3.mp3 0", "end join-3.mp3",
                "current none",
            ])
        for name in ["join-1.mp3", "join-2.mp3", "join-3.mp3"] {
            let ticks = said.filter { $0.hasPrefix("time \(name) ") }
            #expect(ticks.count == 150, "every 10 ms of the 1.5 s item, labelled with the item it belongs to")
        }
    }

    @Test("inside every call, currentItem, currentTime() and timeControlStatus agree with what the call reports")
    func callsAgreeWithGetters() async {
        let (player, _) = joinPlayer()
        let disagreements = Collected<String>()
        let labels = Collected<String>()
        _ = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 4), queue: labels.queue) {
            time in
            labels.append(player.currentItem?.description ?? "none")
            if player.currentTime() != time {
                disagreements.append("time \(time) but currentTime \(player.currentTime())")
            }
            if player.timeControlStatus != .playing { disagreements.append("time \(time) while not playing") }
            if player.currentItem?.currentTime() != time { disagreements.append("item time differs at \(time)") }
        }
        _ = player.addCurrentItemObserver(queue: labels.queue) { item in
            if player.currentItem !== item { disagreements.append("current-item call for \(String(describing: item))") }
        }
        await playToEnd(player)
        #expect(disagreements.values.isEmpty)
        let expected = ["join-1.mp3", "join-2.mp3", "join-3.mp3"].flatMap { Array(repeating: $0, count: 6) }
        #expect(labels.values == expected, "0, 0.25, … 1.25 s of each item, while that item is current")
    }

    @Test("a boundary observer with one time fires once in every item, with that item current")
    func singleBoundaryEveryItem() async {
        let (player, _) = joinPlayer()
        let crossed = Collected<String>()
        _ = player.addBoundaryTimeObserver(forTimes: [MediaTime(value: 1, timescale: 2)], queue: crossed.queue) {
            crossed.append("\(player.currentItem.map(\.description) ?? "none") at \(player.currentTime().seconds)")
        }
        await playToEnd(player)
        #expect(crossed.values == ["join-1.mp3 at 0.5", "join-2.mp3 at 0.5", "join-3.mp3 at 0.5"])
    }

    @Test("two observers that remove each other from their blocks do not deadlock, and no call starts afterwards")
    func mutualRemoval() async {
        let (player, _) = joinPlayer()
        let tokens = Mutex<[ObserverToken]>([])
        let calls = Mutex<[Int]>([0, 0])
        let callsWhenRemoved = Mutex<[Int: Int]>([:])
        let arrived = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        let done = DispatchSemaphore(value: 0)
        for (mine, other) in [(0, 1), (1, 0)] {
            let first = Atomic<Bool>(true)
            let token = player.addPeriodicTimeObserver(
                forInterval: MediaTime(value: 1, timescale: 10), queue: DispatchQueue(label: "observer \(mine)")
            ) { _ in
                calls.withLock { $0[mine] += 1 }
                guard first.exchange(false, ordering: .relaxed) else { return }
                arrived[mine].signal()
                // Both blocks are running now: each removes the other.
                _ = arrived[other].wait(timeout: .now() + 5)
                player.removeObserver(tokens.withLock { $0[other] })
                let count = calls.withLock { $0[other] }
                callsWhenRemoved.withLock { $0[other] = count }
                done.signal()
            }
            tokens.withLock { $0.append(token) }
        }
        player.play()
        let finished = await Task.detached {
            done.wait(timeout: .now() + 20) == .success && done.wait(timeout: .now() + 20) == .success
        }.value
        #expect(finished, "both removals returned")
        await playToEnd(player)
        for index in 0..<2 {
            let removedAt = callsWhenRemoved.withLock { $0[index] } ?? -1
            // One call of the removed observer may already have been running when the removal returned.
            #expect(calls.withLock { $0[index] } <= removedAt + 1, "observer \(index) called after removal")
        }
    }

    @Test("shutdown releases the time observers: a block that holds the engine no longer keeps it alive")
    func shutdownReleasesObservers() {
        weak var released: PlaybackEngine?
        do {
            let engine = PlaybackEngine(sink: NullSink(pacing: .unpaced), logger: quietLogger)
            _ = engine.addBoundaryTimeObserver(forTimes: [MediaTime(value: 1, timescale: 1)], queue: .global()) {
                engine.pause()
            }
            released = engine
            engine.shutdown()
            _ = engine.addBoundaryTimeObserver(forTimes: [MediaTime(value: 2, timescale: 1)], queue: .global()) {
                engine.pause()
            }
        }
        #expect(released == nil, "the engine outlived its last reference")
    }

    @Test("rate, timeControlStatus, reasonForWaitingToPlay, currentItem and its status can be observed")
    func propertiesObserved() async {
        let (player, items) = joinPlayer()
        let rates = Collected<Float>()
        _ = player.observe(\.rate, queue: rates.queue) { rates.append($0) }
        let statuses = Collected<PlayerItem.Status?>()
        _ = player.observe(\.currentItem?.status, queue: statuses.queue) { statuses.append($0) }
        var reasons = player.values(of: \.reasonForWaitingToPlay).makeAsyncIterator()
        let controlStatuses = player.values(of: \.timeControlStatus)
        let current = player.values(of: \.currentItem)
        #expect(await reasons.next() == .some(nil))
        await playToEnd(player)
        player.pause()
        #expect(rates.values == [1, 0])
        #expect(await reasons.next() == .some(.noItemToPlay))
        var seenStatuses: [QueuePlayer.TimeControlStatus] = []
        for await status in controlStatuses {
            seenStatuses.append(status)
            if status == .paused, seenStatuses.count > 1 { break }
        }
        #expect(seenStatuses == [.paused, .playing, .waitingToPlayAtSpecifiedRate, .paused])
        var seenItems: [PlayerItem?] = []
        for await item in current {
            seenItems.append(item)
            if item == nil { break }
        }
        #expect(seenItems == items + [nil])
        #expect(statuses.values.contains(.readyToPlay))
    }

    @Test("a rate other than 0 or 1 is refused with an error naming it, and the rate stays")
    func unsupportedRate() {
        let (player, _) = joinPlayer()
        #expect(throws: PlayerError.unsupportedRate(0.5)) { try player.setRate(0.5) }
        player.rate = 2
        #expect(player.rate == 0)
        player.play()
        player.rate = 0.5
        #expect(player.rate == 1)
        #expect("\(PlayerError.unsupportedRate(0.5))".contains("rate 0.5 is not supported"))
        player.pause()
    }

    @Test("items are released once played: a long-running player does not keep every item it ever queued")
    func playedItemsReleased() async {
        let (player, released) = { () -> (QueuePlayer, [() -> Bool]) in
            let (player, items) = joinPlayer()
            let weakItems = items.map { item in { [weak item] in item == nil } }
            return (player, weakItems)
        }()
        await playToEnd(player)
        #expect(released.allSatisfy { $0() })
        #expect(player.read { $0.player.items.isEmpty && $0.player.entryIDs.isEmpty })
    }
}

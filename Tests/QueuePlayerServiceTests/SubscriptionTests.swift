import Foundation
import NIOCore
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import Synchronization
import TestSupport
import TestTiers
import Testing

/// What a subscriber is told: changes, the position at the interval it asked for, and where the process stands.
@Suite("Subscriptions: position intervals and lifecycle changes", .tier(.deterministic), .timeLimit(.minutes(1)))
struct SubscriptionTests {
    @Test("a position interval tells every multiple of it as it is heard, in order, beside the change events")
    func positionInterval() async throws {
        // In real time: an unpaced sink outruns any reader, and a subscription keeps only the newest 16 events. Every
        // half second, so that all of the 5 s item's fit in those 16 however late this task reads them: under
        // ThreadSanitizer with every suite running it fell over a second behind, and tenths were dropped.
        let service = try ServiceHarness(pacing: .realTime)
        service.add("stereo-44k-5s")
        var told = service.controller.changes(positionInterval: 0.5).makeAsyncIterator()
        _ = await told.next()  // The snapshot a subscription starts with.
        service.run(.play)
        var halves: [Double] = []
        while let snapshot = await told.next(), halves.count < 5 {
            let scaled = snapshot.position * 2
            guard snapshot.status == .playing, abs(scaled - scaled.rounded()) < 1e-9 else { continue }
            if halves.last != scaled.rounded() { halves.append(scaled.rounded()) }
        }
        #expect(halves == [0, 1, 2, 3, 4], "half seconds told: \(halves)")
    }

    @Test("a subscription's interval must be positive; anything below 0.01 s is an error naming it")
    func intervalIsChecked() {
        for (line, accepted) in [
            (#"{"command":"subscribe"}"#, true), (#"{"command":"subscribe","interval":0.05}"#, true),
            (#"{"command":"subscribe","interval":0}"#, false), (#"{"command":"subscribe","interval":-1}"#, false),
        ] {
            switch ControlRequestParser.parse(.line(ByteBuffer(string: line))) {
            case .command(_, .subscribe): #expect(accepted, "\(line) was accepted")
            case .failure(_, let message):
                #expect(!accepted, "\(line): \(message)")
                #expect(message.contains("'interval'"), "\(message)")
            default: Issue.record("\(line) is not a subscription")
            }
        }
    }

    @Test("subscribers are told each change in the order they subscribed, and none after it stops")
    func toldInOrder() throws {
        let service = try ServiceHarness()
        let told = Mutex<[Int]>([])
        let ids = (0..<8).map { index in
            service.controller.observeChanges { _, _ in told.withLock { $0.append(index) } }
        }
        defer { ids.forEach(service.controller.removeChangeObserver) }
        told.withLock { $0 = [] }
        service.run(.volume(0.5, relative: false))
        #expect(told.withLock { $0 } == Array(0..<8))
        // Those that stop are told no more; the others keep their turns.
        service.controller.removeChangeObserver(ids[2])
        service.controller.removeChangeObserver(ids[5])
        told.withLock { $0 = [] }
        service.run(.volume(0.6, relative: false))
        #expect(told.withLock { $0 } == [0, 1, 3, 4, 6, 7])
    }

    @Test("what a change touched is told before its snapshot; a change no glance shows, by the snapshot alone")
    func aspectsFirst() throws {
        enum Told: Equatable {
            case aspects(PlayerAspects)
            case snapshot(volume: Double, queued: [Int])
        }
        let service = try ServiceHarness()
        let ids = service.add("join-1", "join-2", "join-3")
        let told = Mutex<[Told]>([])
        let id = service.controller.observeChanges(
            aspects: { aspects in told.withLock { $0.append(.aspects(aspects)) } },
            { snapshot, queue in
                told.withLock { $0.append(.snapshot(volume: snapshot.volume, queued: queue.entries.map(\.id))) }
            })
        defer { service.controller.removeChangeObserver(id) }
        told.withLock { $0 = [] }
        service.run(.volume(0.5, relative: false))
        service.run(.volume(0.5, relative: false))
        service.run(.move(ids[2], to: 2))  // Behind the current entry: the same count, the same current.
        #expect(
            told.withLock { $0 } == [
                .aspects(.volume), .snapshot(volume: 0.5, queued: ids),
                .aspects([]),  // The same volume again: no change, and no snapshot.
                .aspects([]), .snapshot(volume: 0.5, queued: [ids[0], ids[2], ids[1]]),
            ])
        told.withLock { $0 = [] }
        service.run(.loop(.playlist))
        service.run(.remove([ids[1]]))
        service.run(.play)
        // Playing, the player's own events follow: an unpaced item may already have ended when `play`'s change is
        // glanced at (it did under ThreadSanitizer), so that change touched playback and perhaps the queue too.
        let aspects = told.withLock { $0 }.compactMap { told in
            if case .aspects(let aspects) = told, !aspects.isEmpty { aspects } else { nil }
        }
        #expect(Array(aspects.prefix(2)) == [.modes, .queue], "\(aspects)")
        #expect(aspects.dropFirst(2).first?.contains(.playback) == true, "\(aspects)")
    }

    @Test("entering the background and coming back are changes a subscriber is told")
    func lifecycleIsTold() async throws {
        let service = try ServiceHarness()
        service.add("join-1")
        var told = service.controller.changes().makeAsyncIterator()
        #expect(await told.next()?.application == "active")
        service.run(.background)
        var seen: [String] = []
        while let snapshot = await told.next() {
            seen.append(snapshot.application)
            if snapshot.application == "background" || snapshot.application == "suspended" { break }
        }
        service.run(.foreground)
        while let snapshot = await told.next() {
            seen.append(snapshot.application)
            if snapshot.application == "active" { break }
        }
        #expect(seen.last == "active", "\(seen)")
    }
}

/// Alone under a sanitizer: hundreds of cancellations, each on threads of their own, keep a core busy there; beside
/// the other suites under ThreadSanitizer this one ran past its minute.
@Suite("Subscriptions let go under load", .tier(.deterministic, sanitized: .alone), .timeLimit(.minutes(1)))
struct SubscriptionCancellationTests {
    @Test("a subscriber that goes away while position calls are under way is let go at once, hundreds of times over")
    func cancelledSubscriberIsLetGo() async throws {
        // A connection that closes cancels its subscription's task. The cancellation runs under the Swift runtime's
        // lock on that task, which a position call in progress needs in order to yield to it: a removal of the
        // observer that waited there for the call hung the daemon (1 run in 120 under load; here, the first round).
        // Calls every millisecond of the item's time come in bursts at each render, and the cancellation comes
        // inside one.
        let service = try ServiceHarness(pacing: .realTime)
        // 30 s of items for 200 rounds of a render period or two each (5 s; under ThreadSanitizer, about 15).
        service.add(
            "stereo-44k-5s", "stereo-44k-5s", "stereo-44k-5s", "stereo-44k-5s", "stereo-44k-5s", "stereo-44k-5s")
        service.run(.play)
        for round in 0..<200 {
            let (playing, heard) = AsyncStream.makeStream(of: Void.self)
            let consumer = Task { [controller = service.controller] in
                for await snapshot in controller.changes(positionInterval: 0.001)
                where snapshot.status == .playing && snapshot.position > 0 {
                    heard.yield()
                }
            }
            // The first is the snapshot a subscription starts with; the second, a position call: a burst is under way.
            var snapshots = 0
            for await _ in playing {
                snapshots += 1
                if snapshots == 2 { break }
            }
            guard await cancellationReturns(consumer) else {
                Issue.record("round \(round): cancelling a subscription did not return within 10 s")
                // Its threads are stuck for good: the harness is left alive, since shutting it down would wait too.
                _ = Unmanaged.passRetained(service)
                return
            }
        }
    }
}

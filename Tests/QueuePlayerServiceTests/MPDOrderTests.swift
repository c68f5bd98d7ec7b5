import Foundation
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import TestSupport
import TestTiers
import Testing

/// MPD's `move` of a range, `swap`, `swapid` and `shuffle` on the daemon's core: the order each gives, one change told
/// for each, and MPD's refusals (read from Debian's mpd 0.23.12 given the same commands).
@Suite("MPD's commands that reorder the queue", .tier(.deterministic), .timeLimit(.minutes(1)))
struct MPDOrderTests {
    private let service: ServiceHarness
    private let client: MPDTestClient

    init() throws {
        // At the sink's real pace: unpaced, the first song could be played through between `play` and `pause`, and
        // leave the queue while a test compares two orders.
        service = try ServiceHarness(pacing: .realTime)
        client = MPDTestClient(of: service)
    }

    private func order() -> [Int] { service.controller.queue().map(\.id) }

    @Test("move takes a range to where TO says in the queue that results, as one change")
    func moveRange() async throws {
        let ids = client.queue(5)
        var changes = service.mpdChanges().makeAsyncIterator()
        #expect(client.run("move 1:3 3") == "OK\n")
        #expect(order() == [ids[0], ids[3], ids[4], ids[1], ids[2]])
        #expect(await service.queueChangesUntilVolume(&changes, level: 0.5) == 1)
        #expect(client.run("move 3:5 +0") == "OK\n", "+0: right after the current song")
        #expect(order() == [ids[0], ids[1], ids[2], ids[3], ids[4]])
        #expect(await service.queueChangesUntilVolume(&changes, level: 0.6) == 1)
        #expect(client.run("move 1:3 0") == "OK\n", "to the front: the first of them is current")
        #expect(order() == [ids[1], ids[2], ids[0], ids[3], ids[4]])
        #expect(service.controller.snapshot().current?.id == ids[1])
        for (line, answer) in [
            ("move 1:3 4", "ACK [2@0] {move} Number too large: 4"),
            ("move 3:1 0", "ACK [2@0] {move} Malformed range: 3:1"),
            ("move 1: 0", "ACK [2@0] {move} Open-ended range not supported"),
            ("move -1 0", "ACK [2@0] {move} Open-ended range not supported"),
            ("move 0:9 0", "ACK [2@0] {move} Bad song index"), ("move 2:2 0", "ACK [2@0] {move} Bad song index"),
            ("move x 0", "ACK [2@0] {move} Integer or range expected: x"),
            ("move -1:2 0", "ACK [2@0] {move} Number is negative: -1:2"),
            ("move 1 x", "ACK [2@0] {move} Integer expected: x"),
            ("move 1 5", "ACK [2@0] {move} Number too large: 5"), ("move 1 -1", "ACK [2@0] {move} Number too large: 1"),
            ("move 1 +\(Int.max)", "ACK [2@0] {move} Number too large: \(Int.max)"),
            ("moveid \(ids[1]) +\(Int.max)", "ACK [2@0] {moveid} Number too large: \(Int.max)"),
        ] {
            #expect(client.run(line) == answer + "\n", "\(line)")
        }
        #expect(order() == [ids[1], ids[2], ids[0], ids[3], ids[4]], "no refusal changed the order")
    }

    @Test("swap and swapid exchange two songs; the same song twice is no change")
    func swap() async throws {
        let ids = client.queue(4)
        var changes = service.mpdChanges().makeAsyncIterator()
        #expect(client.run("swap 1 3") == "OK\n")
        #expect(order() == [ids[0], ids[3], ids[2], ids[1]])
        #expect(await service.queueChangesUntilVolume(&changes, level: 0.5) == 1)
        #expect(client.run("swapid \(ids[2]) \(ids[0])") == "OK\n", "with the current song: the other one is current")
        #expect(order() == [ids[2], ids[3], ids[0], ids[1]])
        #expect(service.controller.snapshot().current?.id == ids[2])
        #expect(await service.queueChangesUntilVolume(&changes, level: 0.6) == 1)
        #expect(client.run("swap 2 2") == "OK\n")
        let unchanged = await service.queueChangesUntilVolume(&changes, level: 0.7)
        #expect(unchanged == 0, "swapping a song with itself was no change")
        for (line, answer) in [
            ("swap 0 9", "ACK [2@0] {swap} Bad song index"), ("swap 4 0", "ACK [2@0] {swap} Bad song index"),
            ("swap x 1", "ACK [2@0] {swap} Integer expected: x"),
            ("swap -1 2", "ACK [2@0] {swap} Number too large: -1"),
            ("swap 1", #"ACK [2@0] {swap} wrong number of arguments for "swap""#),
            ("swapid \(ids[1]) 9999", "ACK [50@0] {swapid} No such song"),
            ("swapid x 2", "ACK [2@0] {swapid} Integer expected: x"),
        ] {
            #expect(client.run(line) == answer + "\n", "\(line)")
        }
        #expect(order() == [ids[2], ids[3], ids[0], ids[1]])
    }

    @Test("shuffle gives the songs of the range a new order; while playing or paused the current song stays first")
    func shuffle() async throws {
        let ids = client.queue(30)
        #expect(service.run(.play).ok == true && service.run(.pause).ok == true)
        var changes = service.mpdChanges().makeAsyncIterator()
        #expect(client.run("shuffle") == "OK\n")
        let shuffled = order()
        #expect(shuffled.first == ids[0] && Set(shuffled) == Set(ids))
        #expect(shuffled != ids, "a new order of 29 songs (1 in 29! to fail)")
        #expect(await service.queueChangesUntilVolume(&changes, level: 0.5) == 1, "one change for 29 songs")
        #expect(client.run("shuffle 10:20") == "OK\n")
        let part = order()
        #expect(part[..<10] == shuffled[..<10] && part[20...] == shuffled[20...])
        #expect(Set(part[10..<20]) == Set(shuffled[10..<20]) && part[10..<20] != shuffled[10..<20])
        #expect(client.run("shuffle 25:99") == "OK\n", "an end beyond the queue is cut to it")
        #expect(order()[..<25] == part[..<25])
        for (line, answer) in [
            ("shuffle x", "ACK [2@0] {shuffle} Integer or range expected: x"),
            ("shuffle 3:1", "ACK [2@0] {shuffle} Malformed range: 3:1"),
            ("shuffle 31:40", "ACK [2@0] {shuffle} Bad song index"),
            ("shuffle 1 2", #"ACK [2@0] {shuffle} too many arguments for "shuffle""#),
        ] {
            #expect(client.run(line) == answer + "\n", "\(line)")
        }
    }

    @Test("shuffle while stopped takes in the first song too, as mpd forgets its current song when it stops")
    func shuffleStopped() {
        let ids = client.queue(30)
        #expect(client.run("stop") == "OK\n")
        var firsts: Set<Int> = []
        for _ in 0..<8 {
            #expect(client.run("shuffle") == "OK\n")
            firsts.insert(order()[0])
            #expect(service.controller.snapshot().current?.id == order()[0], "the first song is the current one")
            #expect(client.run("status").contains("state: stop\n"))
        }
        #expect(firsts.count > 1, "the first song changed in 8 shuffles of 30 (1 in 30^7 to fail)")
        #expect(Set(order()) == Set(ids))
    }

    @Test("the socket's rearrange is the same change, and refuses a list that is not the queue")
    func socket() {
        let ids = client.queue(3)
        #expect(service.run(.rearrange(ids: [ids[0], ids[2], ids[1]])).ok == true)
        #expect(order() == [ids[0], ids[2], ids[1]])
        let refused = service.run(.rearrange(ids: [ids[0], ids[1]]))
        #expect(refused.ok == false)
        #expect(refused.error?.contains("must name every queued item once (3 are queued, 2 named)") == true)
        let unknown = service.run(.rearrange(ids: [ids[0], ids[1], 9999]))
        #expect(unknown.error?.contains("no queued item has id 9999") == true)
        #expect(order() == [ids[0], ids[2], ids[1]])
    }
}

import Foundation
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import TestSupport
import TestTiers
import Testing

/// MPD's `prio` and `prioid` on the daemon's core: the answers (read from Debian's mpd 0.23.12 given the same
/// commands), the order they give while random is on, the change told to idling clients, the socket's listing, and
/// the priorities kept across a restart.
@Suite("MPD priorities on the player's one path", .tier(.deterministic), .timeLimit(.minutes(1)))
struct MPDPriorityTests {
    private let service: ServiceHarness
    private let client: MPDTestClient

    init() throws {
        service = try ServiceHarness()
        client = MPDTestClient(of: service)
    }

    /// The value of each `key` line of `answer`, in order.
    private func values(_ key: String, in answer: String) -> [String] {
        answer.split(separator: "\n").compactMap { line in
            line.hasPrefix("\(key): ") ? String(line.dropFirst(key.count + 2)) : nil
        }
    }

    @Test("prio and prioid set what playlistinfo shows as Prio, after Id, only where it is above 0")
    func shown() {
        let ids = client.queue(4)
        #expect(client.run("prio 7 1:3") == "OK\n")
        #expect(client.run("prioid 255 \(ids[3])") == "OK\n")
        let listed = client.run("playlistinfo")
        #expect(values("Prio", in: listed) == ["7", "7", "255"], "\(listed)")
        #expect(listed.contains("Id: \(ids[1])\nPrio: 7\n") && listed.contains("Id: \(ids[3])\nPrio: 255\n"))
        #expect(client.run("playlistid \(ids[0])").contains("Prio") == false, "the current song has none")
        #expect(client.run("prioid 0 \(ids[1])") == "OK\n")
        #expect(values("Prio", in: client.run("playlistinfo")) == ["7", "255"])
        #expect(service.controller.queue().map(\.id) == ids, "random is off: no order changed")
    }

    @Test("prio and prioid refuse as mpd does, and a refusal changes nothing")
    func refusals() {
        let ids = client.queue(2)
        #expect(client.run("prio 256 1") == "ACK [2@0] {prio} Number too large: 256\n")
        #expect(client.run("prio x 1") == "ACK [2@0] {prio} Integer expected: x\n")
        #expect(client.run("prio 3 5") == "ACK [2@0] {prio} Bad song index\n")
        #expect(client.run("prio 3") == "ACK [2@0] {prio} too few arguments for \"prio\"\n")
        #expect(client.run("prioid 3 999") == "ACK [50@0] {prioid} No such song\n")
        #expect(client.run("prioid 3 \(ids[1]) 999") == "ACK [50@0] {prioid} No such song\n")
        #expect(!client.run("playlistinfo").contains("Prio"), "nothing was given a priority by the refusals")
    }

    @Test("with random on, the songs given a priority play next, the highest first, then the others")
    func orderWhileRandom() {
        let ids = client.queue(20)
        #expect(client.run("random 1") == "OK\n")
        #expect(client.run("prioid 9 \(ids[17]) \(ids[5])", "prioid 4 \(ids[11])") == "OK\n")
        let order = service.controller.queue().map(\.id)
        #expect(order.first == ids[0], "the current song stays current")
        #expect(Set(order[1...2]) == [ids[17], ids[5]] && order[3] == ids[11], "\(order)")
        #expect(Set(order) == Set(ids))
        #expect(client.run("add join-1.mp3", "add join-2.mp3") == "OK\n")
        let added = Set(service.controller.queue().map(\.id)).subtracting(ids)
        #expect(Set(service.controller.queue().map(\.id).suffix(from: 4)).isSuperset(of: added), "new songs go last")
        #expect(client.run("next") == "OK\n")
        let now = service.controller.queue().map(\.id)
        #expect(Set([now[0], now[1]]) == [ids[17], ids[5]], "\(now)")
        let current = client.run("currentsong")
        #expect(values("Prio", in: current).isEmpty, "a song's priority is cleared as it becomes current")
        #expect(values("Prio", in: client.run("playlistinfo")) == ["9", "4"])
    }

    @Test("a priority change is a change of the queue: idling clients are told playlist, and its version moves")
    func told() async throws {
        let ids = client.queue(3)
        var changes = service.mpdChanges().makeAsyncIterator()
        let version = values("playlist", in: client.run("status"))
        #expect(client.run("prioid 5 \(ids[2])") == "OK\n")
        #expect(await changes.next() == [.playlist])
        #expect(values("playlist", in: client.run("status")) != version)
        #expect(client.run("prioid 5 \(ids[2])") == "OK\n", "the same priority again")
        service.run(.volume(0.5, relative: false))
        #expect(await changes.next() == [.mixer], "the same priority again was no change")
    }

    @Test("the socket's priority command is the same change; queue lists it; a restart keeps the priorities")
    func socketAndRestart() throws {
        let store = try StateStore()
        var ids: [Int] = []
        do {
            let first = try ServiceHarness(store: store)
            ids = first.add("join-1", "join-2", "join-3")
            #expect(first.run(.priority(12, ids: [ids[2]])).ok == true)
            #expect(first.run(.priority(3, ids: [99])).error?.contains("no queued item has id 99") == true)
            #expect(first.run(.queue).queue?.map(\.priority) == [nil, nil, 12])
        }
        let second = try ServiceHarness(store: store)
        #expect(second.controller.restore())
        #expect(second.controller.queue().map(\.id) == ids)
        #expect(second.run(.queue).queue?.map(\.priority) == [nil, nil, 12])
        #expect(MPDTestClient(of: second).run("playlistid \(ids[2])").contains("Prio: 12\n"))
    }
}

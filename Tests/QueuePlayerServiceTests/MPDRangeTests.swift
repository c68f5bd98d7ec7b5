import Foundation
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import TestSupport
import TestTiers
import Testing

/// MPD's `rangeid` on the daemon's core: a queued song plays a part of itself, listed as `Range`, its length the
/// part's once it plays, refused for the song playing as mpd refuses it, each change told to idling clients, and kept
/// with the queue across a restart. (Its answers against Debian's mpd: MPDDifferentialTests.)
@Suite("MPD ranges of queued songs", .tier(.deterministic), .timeLimit(.minutes(1)))
struct MPDRangeTests {
    @Test("the song playing is refused; the next one's part is listed, and is its length once it plays")
    func playingAndNext() async throws {
        // A stepped sink: nothing is heard unless the test renders it, so the first song stays current.
        let service = try ServiceHarness(sink: SteppedSink())
        let client = MPDTestClient(of: service)
        let ids = try ["join-1.mp3", "sweep-44k-4s.mp3"].map(client.addID)
        #expect(client.run("play") == "OK\n")
        #expect(client.run("rangeid \(ids[0]) 1:2") == "ACK [4@0] {rangeid} Cannot edit the current song\n")
        #expect(client.run("rangeid \(ids[1]) 1.25:2.5") == "OK\n")
        #expect(
            client.run("playlistid \(ids[1])").hasPrefix("file: sweep-44k-4s.mp3\nRange: 1.250-2.500\n"),
            "the Range line follows the file's")
        #expect(client.run("next") == "OK\n")
        let current = await service.waitFor { $0.current?.id == ids[1] && $0.current?.length != nil }
        #expect(current?.current?.length == 1.25, "the part's length")
        let status = client.run("status")
        #expect(status.contains("\nduration: 1.250\n"), "\(status)")
        #expect(client.run("rangeid \(ids[1]) :") == "ACK [4@0] {rangeid} Cannot edit the current song\n")
        let refused = service.run(.range(item: ids[1], start: 1, end: nil))
        #expect(refused.error?.contains("is the current item") == true, "\(refused)")
    }

    @Test("each range set or cleared is one change of the queue; one that changes nothing is none")
    func toldAsQueueChanges() async throws {
        let service = try ServiceHarness()
        let client = MPDTestClient(of: service)
        let ids = try ["join-1.mp3", "join-2.mp3"].map(client.addID)
        var changes = service.mpdChanges().makeAsyncIterator()
        let before = client.queueVersion()
        #expect(client.run("rangeid \(ids[1]) 0.5:1") == "OK\n")
        #expect(client.queueVersion() != before, "plchanges tells a client that read the queue before to read it again")
        #expect(client.run("rangeid \(ids[1]) 0.5:1") == "OK\n")
        #expect(client.run("rangeid \(ids[1]) 0:") == "OK\n")
        #expect(client.run("rangeid \(ids[1]) :") == "OK\n")
        #expect(await service.queueChangesUntilVolume(&changes, level: 0.5) == 2)
    }

    @Test("ranges are kept with the queue across a restart, the current song's too, and forgotten with their song")
    func keptAndForgotten() throws {
        let store = try StateStore()
        var ids: [Int] = []
        do {
            let first = try ServiceHarness(store: store)
            ids = try ["join-1.mp3", "join-2.mp3", "join-3.mp3"].map(MPDTestClient(of: first).addID)
            #expect(first.run(.stop).ok == true)
            #expect(first.run(.range(item: ids[0], start: 0.25, end: nil)).ok == true)
            #expect(first.run(.range(item: ids[1], start: nil, end: 1)).ok == true)
            #expect(first.run(.range(item: ids[2], start: 0.5, end: 1)).ok == true)
            #expect(first.run(.remove([ids[2]])).ok == true)
        }
        let saved = try store.load().ranges
        #expect(saved.keys.sorted() == [ids[0], ids[1]])
        #expect(saved[ids[0]]?.start.seconds == 0.25 && saved[ids[0]]?.duration == .positiveInfinity)
        #expect(saved[ids[1]]?.start.seconds == 0 && saved[ids[1]]?.end.seconds == 1)
        let second = try ServiceHarness(store: store)
        #expect(second.controller.restore())
        let client = MPDTestClient(of: second)
        #expect(client.run("playlistid \(ids[0])").contains("Range: 0.250-\n"))
        #expect(client.run("playlistid \(ids[1])").contains("Range: 0.000-1.000\n"))
    }
}

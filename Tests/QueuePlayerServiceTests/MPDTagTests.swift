import Foundation
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import TestSupport
import TestTiers
import Testing

/// MPD's `addtagid` and `cleartagid` on the daemon's core: tags given to a queued remote song (as upmpdcli gives the
/// tracks it queues from a UPnP server), listed in the order given, shown by every front end while the song says
/// nothing of itself, each change told to idling clients, refused as Debian's mpd 0.23.12 refuses them, and kept
/// with the queue across a restart. The remote songs are never played: nothing is fetched.
@Suite("MPD tags given to queued songs", .tier(.deterministic), .timeLimit(.minutes(1)))
struct MPDTagTests {
    /// A remote song on the loopback's discard port: queued, never fetched.
    private static let remote = "http://127.0.0.1:9/track.mp3"

    private let service: ServiceHarness
    private let client: MPDTestClient

    init() throws {
        service = try ServiceHarness()
        client = MPDTestClient(of: service)
    }

    @Test("addtagid adds tags in the order given, as mpd lists them; cleartagid takes back one tag, or every tag")
    func listed() throws {
        _ = client.run("add join-1.mp3")
        let id = try client.addID(Self.remote)
        for line in [
            #"addtagid \#(id) Title "Remote title""#, "addtagid \(id) artist A1", "addtagid \(id) Artist A2",
            #"addtagid \#(id) Comment "client=upmpdcli;""#, #"addtagid \#(id) Album """#, "addtagid \(id) track 3",
        ] {
            #expect(client.run(line) == "OK\n", "\(line)")
        }
        // Comment is kept but not listed: the daemon reports the tags `tagtypes` lists, and an empty value adds none.
        let place = "Pos: 1\nId: \(id)\nOK\n"
        #expect(
            client.run("playlistid \(id)")
                == "file: \(Self.remote)\nTitle: Remote title\nArtist: A1\nArtist: A2\nTrack: 3\n" + place)
        #expect(client.run("cleartagid \(id) ARTIST") == "OK\n")
        #expect(client.run("playlistid \(id)") == "file: \(Self.remote)\nTitle: Remote title\nTrack: 3\n" + place)
        #expect(client.run("cleartagid \(id)") == "OK\n")
        #expect(client.run("playlistid \(id)") == "file: \(Self.remote)\n" + place)
    }

    @Test("each tag given or taken back is one change of the queue; one that changes nothing is none")
    func toldAsQueueChanges() async throws {
        let id = try client.addID(Self.remote)
        var changes = service.mpdChanges().makeAsyncIterator()
        let before = client.queueVersion()
        #expect(client.run("addtagid \(id) Title One") == "OK\n")
        #expect(client.queueVersion() != before, "plchanges tells a client that read the queue before to read it again")
        #expect(client.run("addtagid \(id) Album Two") == "OK\n")
        #expect(client.run("cleartagid \(id) Genre") == "OK\n")
        #expect(client.run("addtagid \(id) Title \"\"") == "OK\n")
        #expect(client.run("cleartagid \(id)") == "OK\n")
        #expect(await service.queueChangesUntilVolume(&changes, level: 0.5) == 3)
    }

    @Test("refused as mpd refuses: the id, then the tag, then the song, then a local file; a refusal changes nothing")
    func refusals() throws {
        let file = try client.addID("join-1.mp3")
        let id = try client.addID(Self.remote)
        for (line, answer) in [
            ("addtagid \(file) Title X", "ACK [4@0] {addtagid} Cannot edit tags of local file"),
            ("cleartagid \(file)", "ACK [4@0] {cleartagid} Cannot edit tags of local file"),
            ("addtagid \(id) Bogus X", "ACK [2@0] {addtagid} Unknown tag type: Bogus"),
            ("cleartagid \(id) Bogus", "ACK [2@0] {cleartagid} Unknown tag type: Bogus"),
            ("addtagid 9999 Title X", "ACK [50@0] {addtagid} No such song"),
            ("cleartagid 9999", "ACK [50@0] {cleartagid} No such song"),
            ("addtagid x Title X", "ACK [2@0] {addtagid} Integer expected: x"),
            ("addtagid \(id) Title", #"ACK [2@0] {addtagid} wrong number of arguments for "addtagid""#),
            ("cleartagid \(id) Title X", #"ACK [2@0] {cleartagid} too many arguments for "cleartagid""#),
        ] {
            #expect(client.run(line) == answer + "\n", "\(line)")
        }
        #expect(client.run("playlistid \(id)") == "file: \(Self.remote)\nPos: 1\nId: \(id)\nOK\n")
        let refused = service.run(.tag(item: file, name: "Title", value: "X"))
        #expect(refused.error?.contains("whose tags are its own") == true, "\(refused)")
    }

    @Test("the current song shows its given tags to every front end while it says nothing of itself")
    func shownByEveryFrontEnd() throws {
        let id = try client.addID(Self.remote)
        #expect(service.run(.tag(item: id, name: "title", value: "Given")).ok == true)
        #expect(service.run(.tag(item: id, name: "Artist", value: "Band")).ok == true)
        let current = try #require(service.controller.snapshot().current)
        #expect(current.id == id && current.title == "Given" && current.artists == ["Band"])
        #expect(
            client.run("currentsong") == "file: \(Self.remote)\nTitle: Given\nArtist: Band\nPos: 0\nId: \(id)\nOK\n")
    }

    @Test("tags are kept with the queue across a restart, and forgotten with their song")
    func keptAndForgotten() throws {
        let store = try StateStore()
        var ids: [Int] = []
        do {
            let first = try ServiceHarness(store: store)
            let client = MPDTestClient(of: first)
            for uri in [Self.remote, "http://127.0.0.1:9/other.mp3"] { _ = client.run("add \(uri)") }
            ids = first.controller.queue().map(\.id)
            #expect(first.run(.tag(item: ids[0], name: "Title", value: "Kept")).ok == true)
            #expect(first.run(.tag(item: ids[1], name: "Title", value: "Gone")).ok == true)
            #expect(client.run("deleteid \(ids[1])") == "OK\n")
        }
        #expect(try store.load().tags == [ids[0]: [EntryTag(name: "Title", value: "Kept")]])
        let second = try ServiceHarness(store: store)
        #expect(second.controller.restore())
        #expect(MPDTestClient(of: second).run("playlistid \(ids[0])").contains("Title: Kept\n"))
    }
}

import Foundation
import Logging
import QueuePlayer
import QueuePlayerService
import Synchronization
import TestSupport
import TestTiers
import Testing

/// MPD's database commands on the music folder's index, carried out in-process: listings in MPD's order, filters
/// old and new with MPD's words for what is wrong in them, `list` and `count` with their groups, `stats`, `update`
/// and the queue's songs named with their tags. The folder is MusicIndexTests' (two tagged songs in `Mornings/`,
/// one untagged at the top).
@Suite("MPD's database commands on the music index", .tier(.deterministic), .timeLimit(.minutes(1)))
final class MPDDatabaseTests {
    private let service: ServiceHarness
    private let runner: MPDCommandRunner
    private let index: MusicIndex
    /// The music folder indexed.
    private let folder: String
    /// Where the runner tells idling clients of changes that are not the player's.
    private let feed = MPDChangeFeed()
    private var events: AsyncStream<MusicIndex.Event>.AsyncIterator
    /// What `status` said as each update job started.
    private let statusAtStart: StatusProbe

    init() async throws {
        let service = try ServiceHarness()
        let folder = try MusicIndexTests.makeFolder()
        let (stream, tell) = AsyncStream.makeStream(of: MusicIndex.Event.self)
        let statusAtStart = StatusProbe()
        let index = MusicIndex(
            folder: MPDMusicFolder(path: folder), store: service.store, logger: Logger(label: "test.index")
        ) { event in
            if case .started = event { statusAtStart.record() }
            tell.yield(event)
        }
        let runner = MPDCommandRunner(
            controller: service.controller, musicFolder: MPDMusicFolder(path: folder),
            playlists: MPDStoredPlaylists(folder: Scratch.uniquePath("playlists")), versions: MPDQueueVersions(),
            feed: feed, index: index, isLocalClient: false)
        statusAtStart.runner.withLock { $0 = runner }
        var events = stream.makeAsyncIterator()
        #expect(runner.run(lines: ["update"], listOK: false).text == "updating_db: 1\nOK\n")
        #expect(await events.next() == .started(id: 1))
        #expect(await events.next() == .finished(id: 1, changed: true))
        self.service = service
        self.runner = runner
        self.index = index
        self.folder = folder
        self.events = events
        self.statusAtStart = statusAtStart
    }

    /// The index's events hold the probe, the probe the runner and the runner the index: a cycle, broken here.
    deinit { statusAtStart.runner.withLock { $0 = nil } }

    private func run(_ lines: String...) -> String { runner.run(lines: lines, listOK: false).text }

    /// The `file` lines of an answer.
    private func files(_ answer: String) -> [String] {
        answer.split(separator: "\n").filter { $0.hasPrefix("file: ") }.map { String($0.dropFirst(6)) }
    }

    @Test("listall, listallinfo and lsinfo walk the index as MPD walks its database: songs, then each folder")
    func listings() async throws {
        #expect(
            run("listall")
                == "file: plain.mp3\ndirectory: Mornings\nfile: Mornings/two.mp3\nfile: Mornings/one.mp3\nOK\n")
        #expect(run("listall Mornings/one.mp3") == "file: Mornings/one.mp3\nOK\n")
        #expect(run("listall nothere") == "ACK [50@0] {listall} No such directory\n")
        let info = run("listallinfo Mornings")
        #expect(info.hasPrefix("directory: Mornings\nLast-Modified: "), "the folder itself first: \(info)")
        #expect(files(info) == ["Mornings/two.mp3", "Mornings/one.mp3"], "no disc number before disc 1, as in MPD")
        #expect(
            info.contains(
                "Artist: Ana Ñúñez\nAlbumArtist: Various\nTitle: First Light\nAlbum: Mornings\nTrack: 1\n"
                    + "Date: 2019-05-04\nGenre: Jazz\nComposer: Clara Wieck\nDisc: 1\nTime: 3\nduration: 3.000\n"),
            "every tag in MPD's order: \(info)")
        let top = run("lsinfo")
        #expect(
            files(top) == ["plain.mp3"] && top.contains("Time: 5\nduration: 5.000\ndirectory: Mornings\n"), "\(top)")
        #expect(files(run("lsinfo Mornings")) == ["Mornings/two.mp3", "Mornings/one.mp3"])
        #expect(run("tagtypes clear", "lsinfo Mornings/two.mp3").contains("Last-Modified: ") == true)
        #expect(!run("lsinfo Mornings/two.mp3").contains("Artist"), "no tags asked for, none sent")
        let song = run("tagtypes all", "lsinfo Mornings/two.mp3")
        #expect(song.contains("Format: 44100:f:2\nArtist: "), "the decoded format (a mono file, as stereo): \(song)")
    }

    @Test("find and search: expressions and pairs, case, regular expressions, any, base, sort and window")
    func filters() {
        let both = ["Mornings/two.mp3", "Mornings/one.mp3"]
        #expect(files(run("find \"(Album == 'Mornings')\"")) == both)
        #expect(files(run("find album mornings")).isEmpty, "find is exact, letter case included")
        #expect(files(run("search album MORN")) == both, "search finds a part, letter case aside")
        #expect(files(run("find \"(Artist == 'Bo Li 李')\"")) == ["Mornings/two.mp3"])
        #expect(files(run("find \"(AlbumArtist == 'Bo Li 李')\"")) == ["Mornings/two.mp3"], "falls back to Artist")
        #expect(files(run("find \"(!(Genre == 'Rock'))\"")) == ["plain.mp3", "Mornings/one.mp3"])
        #expect(files(run("find \"((Album == 'Mornings') AND (Track == '1'))\"")) == ["Mornings/one.mp3"])
        #expect(files(run("find \"(Title =~ '^Sec')\"")) == ["Mornings/two.mp3"])
        #expect(files(run("search \"(any contains 'WIECK')\"")) == ["Mornings/one.mp3"])
        #expect(files(run("find \"(Album == '')\"")) == ["plain.mp3"], "a tag a song lacks is the empty value")
        #expect(files(run("find \"(base 'Mornings')\"")) == both)
        #expect(files(run("find \"(modified-since '2000-01-01T00:00:00Z')\"")).count == 3)
        #expect(files(run("find \"(file == 'plain.mp3')\"")) == ["plain.mp3"])
        #expect(files(run("find \"(Album == 'Mornings')\" sort -Title")) == both)
        #expect(files(run("find \"(Album == 'Mornings')\" sort Title window 1:2")) == ["Mornings/two.mp3"])
        #expect(run("find \"(Artist = 'x')\"") == "ACK [2@0] {find} '==' or '!=' expected\n")
        #expect(run("find \"(Bogus == 'x')\"") == "ACK [2@0] {find} Unknown filter type: Bogus\n")
        #expect(run("find \"(Artist == 'x'\"") == "ACK [2@0] {find} ')' expected\n")
        #expect(run("find \"(Artist == x)\"") == "ACK [2@0] {find} Quoted string expected\n")
        #expect(run("find Artist") == "ACK [2@0] {find} Incorrect number of filter arguments\n")
        #expect(run("find bogus x") == "ACK [2@0] {find} Unknown filter type\n")
    }

    @Test("list and count: each value once in byte order (an untagged song gives the empty one), grouped")
    func listAndCount() {
        #expect(run("list Album") == "Album: \nAlbum: Mornings\nOK\n")
        #expect(run("list Artist \"(Album == 'Mornings')\"") == "Artist: Ana Ñúñez\nArtist: Bo Li 李\nOK\n")
        #expect(run("list album \"Bo Li 李\"") == "Album: Mornings\nOK\n", "MPD 0.12's form")
        #expect(
            run("list Title group Album") == "Album: \nTitle: \nAlbum: Mornings\nTitle: First Light\n"
                + "Title: Second Light\nOK\n")
        #expect(run("list Genre window 1:2") == "Genre: Jazz\nOK\n")
        #expect(run("list Bogus") == "ACK [2@0] {list} Unknown tag type: Bogus\n")
        #expect(run("list Album group Album") == "ACK [2@0] {list} Conflicting group\n")
        #expect(run("count \"(Album == 'Mornings')\"") == "songs: 2\nplaytime: 6\nOK\n")
        #expect(
            run("count group Album") == "Album: \nsongs: 1\nplaytime: 5\nAlbum: Mornings\nsongs: 2\nplaytime: 6\nOK\n")
    }

    @Test("readpicture sends the tag's cover and albumart the folder's, in chunks of the binary limit")
    func pictures() throws {
        let cover = try String(contentsOf: Fixtures.directory.appendingPathComponent("cover.bin"), encoding: .ascii)
        let chunk = { (offset: Int, count: Int) in
            String(cover.dropFirst(offset).prefix(count))
        }
        #expect(
            run("readpicture Mornings/one.mp3 0")
                == "size: 20000\ntype: image/png\nbinary: 8192\n\(chunk(0, 8192))\nOK\n")
        #expect(
            run("readpicture Mornings/one.mp3 16384")
                == "size: 20000\ntype: image/png\nbinary: 3616\n\(chunk(16384, 3616))\nOK\n")
        #expect(run("readpicture Mornings/one.mp3 20000") == "size: 20000\ntype: image/png\nbinary: 0\n\nOK\n")
        #expect(run("readpicture Mornings/one.mp3 20001") == "ACK [2@0] {readpicture} Bad file offset\n")
        #expect(run("readpicture Mornings/two.mp3 0") == "OK\n", "no picture: nothing")
        #expect(run("binarylimit 63") == "ACK [2@0] {binarylimit} Value too small\n")
        #expect(run("binarylimit 64", "albumart Mornings/two.mp3 2") == "size: 7\nbinary: 5\ncover\nOK\n")
        #expect(run("albumart plain.mp3 0") == "ACK [50@0] {albumart} No file exists\n")
        #expect(run("albumart Mornings/two.mp3 8") == "ACK [2@0] {albumart} Offset too large\n")
        let files = run("listfiles Mornings")
        #expect(files.contains("file: cover.jpg\nsize: 7\nLast-Modified: ") && files.contains("directory: loop\n"))
    }

    @Test("stickers are kept in the state store, told to idling clients as sticker, found while the song is indexed")
    func stickers() async throws {
        let (told, tell) = AsyncStream.makeStream(of: MPDSubsystems.self)
        _ = feed.add { tell.yield($0) }
        var changes = told.makeAsyncIterator()
        #expect(run("sticker set song Mornings/two.mp3 rating 4", "sticker set song plain.mp3 rating 1") == "OK\n")
        #expect(await changes.next() == [.sticker])
        #expect(await changes.next() == [.sticker])
        #expect(try service.store.sticker("rating", ofSong: "Mornings/two.mp3") == "4")
        #expect(run("sticker get song Mornings/two.mp3 rating") == "sticker: rating=4\nOK\n")
        #expect(run("sticker find song Mornings rating") == "file: Mornings/two.mp3\nsticker: rating=4\nOK\n")
        #expect(run("sticker get song broken.mp3 rating") == "ACK [50@0] {sticker} No such song\n", "not indexed")

        try FileManager.default.removeItem(atPath: "\(folder)/Mornings/two.mp3")
        #expect(run("update Mornings") == "updating_db: 2\nOK\n")
        #expect(await events.next() == .started(id: 2))
        #expect(await events.next() == .finished(id: 2, changed: true))
        #expect(run("sticker find song \"\" rating") == "file: plain.mp3\nsticker: rating=1\nOK\n")
        #expect(run("sticker get song Mornings/two.mp3 rating") == "ACK [50@0] {sticker} No such song\n")
        #expect(try service.store.sticker("rating", ofSong: "Mornings/two.mp3") == "4", "kept for its return")

        #expect(run("sticker delete song plain.mp3") == "OK\n")
        #expect(await changes.next() == [.sticker])
        #expect(run("sticker delete song plain.mp3") == "ACK [50@0] {sticker} no such sticker\n")
        #expect(run("sticker list song plain.mp3") == "OK\n")
    }

    @Test("stats counts the index; status shows the update job while it runs; queued songs carry their tags")
    func statsUpdateAndQueue() async throws {
        let stats = run("stats")
        for line in ["artists: 2", "albums: 1", "songs: 3", "db_playtime: 11", "playtime: 0"] {
            #expect(stats.contains("\(line)\n"), "\(stats)")
        }
        #expect(stats.contains("db_update: "))
        #expect(statusAtStart.statuses.withLock { $0 }.first?.contains("updating_db: 1\n") == true)
        #expect(!run("status").contains("updating_db"), "no job runs now")
        #expect(run("rescan Mornings") == "updating_db: 2\nOK\n")
        #expect(await events.next() == .started(id: 2))
        #expect(await events.next() == .finished(id: 2, changed: true))
        #expect(run("update ../etc") == "ACK [2@0] {update} Malformed path\n")

        #expect(run("findadd \"(Album == 'Mornings')\"") == "OK\n")
        let queue = run("playlistinfo")
        #expect(files(queue) == ["Mornings/two.mp3", "Mornings/one.mp3"])
        #expect(queue.contains("Title: Second Light\nAlbum: Mornings\nTrack: 2\nDate: 2019\nGenre: Rock\nTime: 3\n"))

        #expect(files(run("playlistfind \"(Title == 'First Light')\"")) == ["Mornings/one.mp3"], "by the index's tags")
        let found = run("playlistsearch title LIGHT")
        #expect(files(found) == ["Mornings/two.mp3", "Mornings/one.mp3"], "any case, anywhere: \(found)")
        #expect(found.contains("Genre: Rock\nTime: 3\n") && found.contains("Pos: 1\nId: "), "as playlistinfo: \(found)")
        #expect(run("playlistfind title light") == "OK\n", "find is exact")
        #expect(files(run("playlistfind file Mornings/two.mp3")) == ["Mornings/two.mp3"])
        #expect(run("playlistfind \"(Title == 'x'\"") == "ACK [2@0] {playlistfind} ')' expected\n")
    }
}

/// Asks a runner for `status` when told to: as an update job starts, on the job's thread.
private final class StatusProbe: Sendable {
    /// The runner asked, once it exists.
    let runner = Mutex<MPDCommandRunner?>(nil)
    /// Each answer, in order.
    let statuses = Mutex<[String]>([])

    func record() {
        guard let runner = runner.withLock({ $0 }) else { return }
        let status = runner.run(lines: ["status"], listOK: false).text
        statuses.withLock { $0.append(status) }
    }
}

import Foundation
import TestSupport
import TestTiers
import Testing

/// One MPD session replayed against Debian's mpd 0.23 and against the daemon, answer by answer: the same errors word
/// for word, the same fields in the same order. What docs/mpd.md lists as different is taken out first: ids and
/// versions (each server numbers its own), `consume` (always on here), lengths, times and audio formats (each decoder's
/// own), and the bit rate (not known to the daemon's front end yet).
@Suite("MPD answers, line for line against Debian's mpd", .tier(.servers))
struct MPDDifferentialTests {
    /// The session: queue edits and reports in a state both servers share (stopped, two songs), then every refusal.
    static let session = [
        "add id3v24-multi.mp3", "add stereo-44k-5s.mp3", "play", "stop", "status", "currentsong", "playlistinfo",
        "playlistinfo 1", "playlist", "playlist 0", "swap 0 1", "playlistinfo", "swap 0 1", "move 1:2 0", "move 0:2 0",
        "playlistinfo", "move 1:2 0", "swap 0 9", "swap x 1", "swapid 99 98", "move 3:1 0", "move 1: 0", "move 0:9 0",
        "move 0:1 5",
        "shuffle x", "shuffle 3:1", "shuffle 9:10", "delete x", "delete 3:1", "playlistinfo 1:x", "playlistinfo -2",
        "playlistinfo 2", "playlistinfo -1", "prio 3 1", "prio 3 1:", "prio 256 1", "prio x 1", "prio 3 5", "prio 3",
        "prioid 3 99", "playlistinfo", "prio 0 1", "playlistinfo 1", "setvol 40", "getvol", "volume 5", "getvol",
        "play 99", "playid 99", "deleteid 99",
        "delete 5", "move 0 5", "moveid 99 0", "seekid 99 3", "seek 7 3", "setvol 200", "setvol abc", "setvol -1",
        "pause 2", "seekcur 3", "ping extra", "frobnicate", "add /etc/hostname", "add nothing-here.mp3",
        #"add "unterminated"#, #"add "x"y"#, "idle bogus", "plchanges abc", "playlistinfo 5", "playlistid 99",
        "consume 2", "tagtypes enable Bogus", "tagtypes foo", "tagtypes clear x", "command_list_ok_begin", "ping",
        "getvol", "play 5", "ping", "command_list_end", "command_list_begin", "ping", "status", "command_list_end",
        "rm mylist", "save mylist", "save mylist", "listplaylists", "listplaylist mylist", "listplaylistinfo mylist",
        "listplaylist nope", "load nope", "save bad/name", "playlistadd mylist stereo-44k-5s.mp3",
        "playlistadd mylist nothere.mp3", "listplaylist mylist", "playlistdelete mylist 9", "playlistdelete mylist 0",
        "rename mylist other", "rename nope x", "rename other other", "load other 0:1", "playlistinfo",
        "playlistclear other", "listplaylist other", "lsinfo", "lsinfo nothere", "lsinfo id3v24-multi.mp3",
        "rm other", "rm other", "listplaylists", "repeat 2", "single 2", "repeat 1", "status", "single 1", "status",
        "single 0", "repeat 0", "status", "single 1", "status", "single oneshot", "status", "repeat 1", "status",
        "repeat 0", "single 0", "delete 1", "status", "clear", "status",
        // Random while stopped with songs queued makes mpd forget its current song, as docs/mpd.md says: empty here.
        "random 2", "random 1", "status", "random 0", "ping",
        "replay_gain_status", "replay_gain_mode track", "replay_gain_status", "replay_gain_mode Track",
        "replay_gain_mode", "replay_gain_mode auto", "replay_gain_status", "replay_gain_mode off",
        // The database: listings, filters old and new, list and count with groups, their refusals, an update.
        "listall", "listallinfo", "listall Mornings", "listall nothere", "lsinfo Mornings", "lsinfo Mornings/one.mp3",
        #"find "(Album == 'Mornings')""#, "find album mornings", "search album MORN", #"find "(Genre == 'Rock')""#,
        #"find "(AlbumArtist == 'Various')""#, #"find "((Album == 'Mornings') AND (!(Track == '1')))""#,
        #"search "(any contains 'wieck')""#, #"find "(base 'Mornings')""#, #"find "(Album == '')""#,
        #"find "(Album == 'Mornings')" sort -Title"#, #"find "(Album == 'Mornings')" sort Title window 1:2"#,
        "list Album", "list Artist", "list Genre", "list Title group Album", #"list album "Bo Li 李""#, "list file",
        "count group Album", #"count "(Album == 'Mornings')""#, "stats",
        #"find "(Artist = 'x')""#, #"find "(Bogus == 'x')""#, #"find "(Artist == 'x'""#, #"find "(Artist == x)""#,
        "find Artist", "find bogus x", "list Bogus", "list Album group Album", "update ../etc", "update",
        #"findadd "(Album == 'Mornings')""#, "playlistinfo", #"playlistfind "(Album == 'Mornings')""#,
        #"find "(base 'Mornings')" sort Last-Modified"#, #"find "(base 'Mornings')" sort -last-modified"#,
        #"find "(AudioFormat =~ '44100:*:*')""#, #"find "(AudioFormat =~ '48000:*:*')""#,
        #"count "(AudioFormat =~ '*:*:*')""#, #"find "(AudioFormat == '44100:*:2')""#,
        #"find "(AudioFormat =~ 'x')""#, #"find "(AudioFormat contains 'x')""#,
        #"find "(AudioFormat =~ '44100:12:2')""#, #"find "(AudioFormat =~ '44100:*:9')""#,
        #"find "(AudioFormat =~ '44100:*:2x')""#, #"find "(AudioFormat =~ '44100')""#,
        #"find "(base 'Mornings')" sort -Track"#, #"find "(base 'Mornings')" sort Bogus"#,
        #"findadd "(Title == 'Second Light')" position 2"#, "playlistinfo",
        #"findadd "(Album == 'x')" position 99"#, "add stereo-44k-5s.mp3 abc",
        "playlistsearch title LIGHT", "playlistfind file stereo-44k-5s.mp3", #"playlistfind "(Title == 'x'""#,
        // Stickers: set, read, listed, found (by folder, by value, compared as text), deleted, and the refusals.
        "sticker get song stereo-44k-5s.mp3 rating", "sticker set song stereo-44k-5s.mp3 rating 5",
        "sticker get song stereo-44k-5s.mp3 rating", "sticker set song Mornings/two.mp3 rating 2",
        #"sticker set song Mornings/one.mp3 "play count" 3"#, #"sticker set song Mornings/one.mp3 rating "hi there""#,
        "sticker list song Mornings/one.mp3", #"sticker find song "" rating"#, "sticker find song Mornings rating",
        "sticker find song Mornings rating = 2", #"sticker find song "" rating > 1"#,
        #"sticker find song "" rating < 3"#, #"sticker find song "" rating ! 3"#, "sticker find song Morn rating",
        "sticker find song nothere rating",
        "sticker set song nothere.mp3 rating 5", "sticker set song ../etc/passwd rating 5",
        "sticker set playlist x rating 5", "sticker set song stereo-44k-5s.mp3 rating",
        "sticker get song stereo-44k-5s.mp3", "sticker bogus song stereo-44k-5s.mp3", "sticker", "sticker get song",
        "sticker delete song Mornings/two.mp3 rating", "sticker delete song Mornings/two.mp3 rating",
        "sticker delete song Mornings/one.mp3", "sticker delete song Mornings/one.mp3",
        "sticker list song Mornings/one.mp3", "sticker list song nothere.mp3",
        #"sticker set song stereo-44k-5s.mp3 rating """#, "sticker get song stereo-44k-5s.mp3 rating",
        #"sticker find song "" rating"#, "sticker set song stereo-44k-5s.mp3 a=b 1",
        "sticker list song stereo-44k-5s.mp3",
        // Stored playlists edited by position and by search; clearerror; config, which a TCP client may not use.
        "playlistadd pl1 stereo-44k-5s.mp3", "playlistadd pl1 id3v24-multi.mp3", "playlistadd pl1 Mornings",
        "playlistmove pl1 0 2", "listplaylist pl1", "playlistmove pl1 0 4", "playlistmove pl1 5 5",
        "playlistmove nope 0 1", "playlistmove pl1 x 1", "playlistmove pl1 -1 1", "searchaddpl pl1 album morn",
        "listplaylist pl1", "searchaddpl pl2 title nothing-matches", "listplaylists",
        "searchaddpl pl1 title second position 1", "listplaylist pl1", "searchaddpl pl1 title second position 99",
        "searchaddpl pl1 title second position x", #"searchaddpl pl1 "(Title contains 'First')""#,
        "listplaylist pl1", "searchaddpl pl3 album mornings position 0", "listplaylist pl3",
        "searchaddpl pl4 title nothing position 5", "searchaddpl pl1", "searchaddpl pl1 title", "rm pl1", "rm pl3",
        "add Mornings", "playlistinfo", "delete 1:", "add /", "playlistinfo", "delete 1:",
        "clearerror", "clearerror 1", "config",
        // Messages between clients, within one: channels, subscriptions, a message read, and the refusals.
        "channels", "subscribe bad!name", "subscribe chan:1", "subscribe chan:1", "subscribe other_2", "channels",
        "sendmessage chan:1 hello", #"sendmessage chan:1 "two words""#, "readmessages", "readmessages",
        "sendmessage nobody x", "unsubscribe chan:1", "unsubscribe chan:1", #"sendmessage "" x"#, "subscribe",
        // Pictures: the tag's, in chunks, and a cover file's; the limits.
        "readpicture Mornings/one.mp3 0", "readpicture Mornings/one.mp3 16384", "readpicture Mornings/one.mp3 20001",
        "readpicture Mornings/two.mp3 0", "albumart Mornings/two.mp3 0", "albumart Mornings/two.mp3 3",
        "albumart stereo-44k-5s.mp3 0", "albumart Mornings/two.mp3 999", "binarylimit 63", "binarylimit 64",
        "albumart Mornings/two.mp3 0", "replay_gain_status",
        // A tag's comments (none in these songs), and what is no song.
        "readcomments Mornings/one.mp3", "readcomments Mornings", "readcomments nothere.mp3", #"readcomments """#,
        "readcomments /etc/hostname", "readcomments",
    ]

    @Test("the same session gets the same answers from the daemon as from mpd, but for what docs/mpd.md lists")
    func sameAnswers() async throws {
        let music = Subprocess.temporaryFile("music").path
        try FileManager.default.removeItem(atPath: music)
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(atPath: music)
            try? FileManager.default.removeItem(atPath: "\(music).playlists")
        }
        for name in ["stereo-44k-5s", "id3v24-multi"] {
            try FileManager.default.copyItem(atPath: Fixtures.mp3(name).path, toPath: "\(music)/\(name).mp3")
        }
        try FileManager.default.createDirectory(atPath: "\(music)/Mornings", withIntermediateDirectories: true)
        // Changed in the same second, 0.8 s apart: mpd sorts by the second, so `sort Last-Modified` keeps them in
        // its own order, where a finer clock would put one first.
        let second = Date(timeIntervalSince1970: 1_700_000_000)
        for (name, fixture, offset) in [("one", "tagged-v24", 0.1), ("two", "tagged-v23", 0.9)] {
            let path = "\(music)/Mornings/\(name).mp3"
            try FileManager.default.copyItem(atPath: Fixtures.mp3(fixture).path, toPath: path)
            try FileManager.default.setAttributes(
                [.modificationDate: second.addingTimeInterval(offset)], ofItemAtPath: path)
        }
        try String(repeating: "a cover file ", count: 10).write(
            toFile: "\(music)/Mornings/cover.png", atomically: true, encoding: .utf8)
        let mpd = try await MPDReferenceServer(musicFolder: music)
        let socket = privateSocket("mpd-differential")
        let port = try LoopbackPort.free()
        let daemon = try RunningDaemon([
            "--sink", "null", "--pause", "--socket", socket, "--state-file", Subprocess.temporaryFile("sqlite").path,
            "--mpd", "127.0.0.1:\(port)", "--music-directory", music, "--playlist-directory", "\(music).playlists",
        ])
        // The MPD address is bound before the control socket answers: its first state says it is.
        #expect(try await DaemonStates(socket: socket).first { _ in true } != nil)
        // Both index the folder as they start; mpc waits for the end of an update (idle update) as for mpd's.
        let scan = await Subprocess.run("/usr/bin/mpc", ["--port", "\(port)", "update", "--wait"])
        #expect(scan.status == 0, "\(scan.standardError)")

        let theirs = await MPDSessionReplay.answers(port: mpd.port, lines: Self.session)
        let ours = await MPDSessionReplay.answers(port: port, lines: Self.session)
        #expect(theirs.count == Self.session.count, "\(theirs)")
        for (index, line) in Self.session.enumerated() where index < min(theirs.count, ours.count) {
            #expect(Self.comparable(ours[index]) == Self.comparable(theirs[index]), "answers to \(line)")
        }

        for (session, songs) in [(Self.tagSession, Self.fileAndRemote), (Self.rangeSession, Self.twoFilesAndRemote)] {
            let theirs = await Self.answers(to: session, afterAdding: songs, port: mpd.port)
            let ours = await Self.answers(to: session, afterAdding: songs, port: port)
            #expect(theirs.count == session.count, "\(theirs)")
            for (index, line) in session.enumerated() where index < min(theirs.count, ours.count) {
                #expect(Self.comparable(ours[index]) == Self.comparable(theirs[index]), "answers to \(line)")
            }
        }

        let listed = { (port: Int) in
            Set(await MPDSessionReplay.answers(port: port, lines: ["commands"])[0].split(separator: "\n"))
        }
        let theirCommands = await listed(mpd.port)
        let ourCommands = await listed(port)
        #expect(ourCommands.subtracting(theirCommands).isEmpty, "commands mpd does not list")
        #expect(await control(socket, "quit").status == 0)
        #expect(await daemon.exitStatus() == 0, "\(daemon.log)")
    }

    /// A file and a remote song, queued for ``tagSession``: the remote song is never played, so nothing is fetched.
    static let fileAndRemote = ["stereo-44k-5s.mp3", "http://127.0.0.1:9/track.mp3"]

    /// Tags given to a queued remote song (`{1}`) and to a file (`{0}`).
    static let tagSession = [
        "addtagid {0} Title X", "cleartagid {0}", #"addtagid {1} Title "Remote title""#,
        "addtagid {1} artist A1", "addtagid {1} Artist A2", #"addtagid {1} Comment "client=x;""#,
        #"addtagid {1} Album """#, "addtagid {1} track 3", "playlistid {1}",
        "cleartagid {1} ARTIST", "playlistid {1}", "addtagid {1} Bogus x", "cleartagid {1} Bogus",
        "addtagid 9999 Title x", "cleartagid 9999", "addtagid x Title x", "addtagid {1} Title",
        "cleartagid {1} Title X", "cleartagid {1}", "playlistinfo", "clear",
    ]

    /// Two files and a remote song, queued for ``rangeSession`` while both servers are stopped.
    static let twoFilesAndRemote = ["stereo-44k-5s.mp3", "id3v24-multi.mp3", "http://127.0.0.1:9/track.mp3"]

    /// Parts of the queued songs played in place of the whole: the first song (`{0}`, current but stopped), the
    /// second (`{1}`) with ends open, cut at the song's end, in milliseconds and cleared, the remote one (`{2}`,
    /// whose length is not known), and the refusals.
    static let rangeSession = [
        "rangeid {1} 1:2", "playlistid {1}", "rangeid {1} 1.5:", "playlistid {1}", "rangeid {1} :2.0005",
        "playlistid {1}", "rangeid {1} 0:", "playlistid {1}", "rangeid {1} 0.5:99", "playlistid {1}",
        "rangeid {1} :", "playlistid {1}", "rangeid {1} 99:", "rangeid {1} 2-5", "rangeid {1} 5:3", "rangeid {1} 1:1",
        "rangeid {1} -1:2", "rangeid {1} 1:2:3", "rangeid {1} 5", "rangeid {1} x:", "rangeid 9999 1:2",
        "rangeid x 1:2", "rangeid {1}", "rangeid {2} 1:2", "playlistid {2}", "rangeid {0} 1:2", "playlistinfo",
        "clear",
    ]

    /// The answers to `session` on the server at `port` after `clear` and `addid` of each of `songs`, with `{0}`,
    /// `{1}`… in its lines the ids the songs got there.
    private static func answers(to session: [String], afterAdding songs: [String], port: Int) async -> [String] {
        let added = await MPDSessionReplay.answers(port: port, lines: ["clear"] + songs.map { "addid \($0)" })
        let ids = added.dropFirst().map { String($0.dropFirst("Id: ".count).prefix { $0.isNumber }) }
        guard ids.count == songs.count else { return added }
        let lines = session.map { line in
            ids.enumerated().reduce(line) { $0.replacingOccurrences(of: "{\($1.offset)}", with: $1.element) }
        }
        return await MPDSessionReplay.answers(port: port, lines: lines)
    }

    /// An answer with what docs/mpd.md says differs taken out, and ids numbered by first appearance.
    private static func comparable(_ answer: String) -> [String] {
        let differing: Set<Substring> = [
            "playlist", "consume", "Time", "duration", "time", "elapsed", "bitrate", "audio", "Format", "playtime",
            "db_playtime", "uptime", "db_update", "updating_db",
        ]
        var ids: [Substring: Int] = [:]
        var previousKey: Substring = ""
        return answer.split(separator: "\n").compactMap { line -> String? in
            guard let colon = line.firstIndex(of: ":"), !line.hasPrefix("ACK") else { return String(line) }
            let key = line[..<colon]
            defer { previousKey = key }
            // A stored playlist's time of change is when each server wrote it.
            if differing.contains(key) || (key == "Last-Modified" && previousKey == "playlist") { return nil }
            guard ["Id", "songid", "nextsongid"].contains(key) else { return String(line) }
            let value = line[line.index(colon, offsetBy: 2)...]
            let number = ids[value] ?? ids.count
            ids[value] = number
            return "\(key): id\(number)"
        }
    }
}

import Foundation
import TestSupport
import TestTiers
import Testing

/// One MPD session replayed against Debian's mpd 0.23 and against the daemon, answer by answer: the same errors word
/// for word, the same fields in the same order. What docs/mpd.md lists as different is taken out first: ids and
/// versions (each server numbers its own), `consume` (always on here), lengths and times (each decoder's own), and the
/// audio format and bit rate (not known to the daemon's front end yet).
@Suite("MPD answers, line for line against Debian's mpd", .tier(.servers))
struct MPDDifferentialTests {
    /// The session: queue edits and reports in a state both servers share (stopped, two songs), then every refusal.
    static let session = [
        "add id3v24-multi.mp3", "add stereo-44k-5s.mp3", "play", "stop", "status", "currentsong", "playlistinfo",
        "playlistinfo 1", "setvol 40", "getvol", "volume 5", "getvol", "play 99", "playid 99", "deleteid 99",
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
        "single 0", "repeat 0", "status", "delete 1", "status", "clear", "status",
        // Random while stopped with songs queued makes mpd forget its current song, as docs/mpd.md says: empty here.
        "random 2", "random 1", "status", "random 0", "ping",
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
        let mpd = try await MPDReferenceServer(musicFolder: music)
        let socket = privateSocket("mpd-differential")
        let port = try LoopbackPort.free()
        let daemon = try RunningDaemon([
            "--sink", "null", "--pause", "--socket", socket, "--state-file", Subprocess.temporaryFile("sqlite").path,
            "--mpd", "127.0.0.1:\(port)", "--music-directory", music, "--playlist-directory", "\(music).playlists",
        ])
        // The MPD address is bound before the control socket answers: its first state says it is.
        #expect(try await DaemonStates(socket: socket).first { _ in true } != nil)

        let theirs = await MPDSessionReplay.answers(port: mpd.port, lines: Self.session)
        let ours = await MPDSessionReplay.answers(port: port, lines: Self.session)
        #expect(theirs.count == Self.session.count, "\(theirs)")
        for (index, line) in Self.session.enumerated() where index < min(theirs.count, ours.count) {
            // The queue's other songs are named by their file alone until the music folder is indexed.
            let tagged = !["playlistinfo", "listplaylistinfo", "lsinfo"].contains { line.hasPrefix($0) }
            // mpd lists a folder in its database's order, the daemon in name order: compared as sets.
            let ordered = line.hasPrefix("lsinfo") ? { (lines: [String]) in lines.sorted() } : { $0 }
            #expect(
                ordered(Self.comparable(ours[index], tagged: tagged))
                    == ordered(Self.comparable(theirs[index], tagged: tagged)), "answers to \(line)")
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

    /// An answer with what docs/mpd.md says differs taken out (and the tags, unless `tagged`), and ids numbered by
    /// first appearance.
    private static func comparable(_ answer: String, tagged: Bool) -> [String] {
        var differing: Set<Substring> = [
            "playlist", "consume", "Time", "duration", "time", "elapsed", "bitrate", "audio", "Format",
        ]
        if !tagged { differing.formUnion(["Artist", "Title", "Album"]) }
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

import Foundation
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import TestSupport
import TestTiers
import Testing

/// MPD's protocol as MPD 0.23 frames and answers it: lines read, command lists, `idle`, arguments and paths. The
/// expected answers were read from Debian's mpd 0.23.12 given the same lines.
@Suite("MPD protocol: lines, lists, idle, arguments", .tier(.deterministic))
struct MPDProtocolTests {
    @Test("a line splits as MPD's tokenizer splits it: quotes, backslashes, blanks")
    func requestLines() throws {
        #expect(try MPDRequest.parse("status") == MPDRequest(name: "status"))
        #expect(try MPDRequest.parse("  add   song.mp3 ") == MPDRequest(name: "add", arguments: ["song.mp3"]))
        #expect(
            try MPDRequest.parse(#"add "Zoë’s \"best\" \\ of.mp3" 3"#)
                == MPDRequest(name: "add", arguments: [#"Zoë’s "best" \ of.mp3"#, "3"]))
        #expect(try MPDRequest.parse(#"find "" x"#) == MPDRequest(name: "find", arguments: ["", "x"]))
    }

    @Test("a line that is not a command gets MPD's words; one with no command word closes the connection")
    func badLines() {
        let cases: [(String, String, Bool)] = [
            (#"add "unterminated"#, #"Missing closing '"'"#, false),
            (#"add "x"y"#, #"Space expected after closing '"'"#, false),
            (#"add x"y"#, "Invalid unquoted character", false),
            ("pl@y", "Invalid word character", true),
            ("   ", "No command given", true),
        ]
        for (line, message, closes) in cases {
            #expect(throws: MPDError(.unknown, message, closesConnection: closes)) { try MPDRequest.parse(line[...]) }
        }
        #expect(
            MPDError(.argument, "Bad song index", command: "play").line(index: 2) == "ACK [2@2] {play} Bad song index\n"
        )
    }

    @Test("command lists are gathered and run whole; idle waits, noidle ends it, and a command during idle closes")
    func framing() {
        var session = MPDSession()
        #expect(session.receive("command_list_ok_begin") == .wait)
        #expect(session.receive("status") == .wait)
        #expect(session.receive("currentsong") == .wait)
        #expect(
            session.receive("command_list_end")
                == .execute(lines: ["status", "currentsong"], isList: true, listOK: true))
        #expect(session.receive("noidle") == .wait, "noidle while not idling is ignored")
        #expect(session.receive("idle") == .wait)
        #expect(session.isIdling)
        #expect(session.receive("noidle") == .write("OK\n"))
        #expect(session.receive("idle") == .wait)
        #expect(session.receive("status") == .close, "only noidle may come during idle")
        var guest = MPDSession()
        #expect(
            guest.receive("idle", mayIdle: false) == .write("ACK [4@0] {idle} you don't have permission for \"idle\"\n")
        )
        var web = MPDSession()
        #expect(web.receive("GET / HTTP/1.1") == .close, "MPD closes a line that starts with no command")
    }

    @Test("a change while not idling is kept for the next idle; idle names only what it waits for, in MPD's order")
    func idleChanges() {
        var session = MPDSession()
        #expect(session.changed([.mixer, .playlist]) == nil)
        #expect(session.receive("idle player") == .wait, "neither change is the player's")
        #expect(session.changed([.mixer]) == nil)
        #expect(session.changed([.player]) == "changed: player\nOK\n")
        #expect(session.receive("idle") == .wait, "an idle answered clears the changes it did not name, as MPD's")
        #expect(session.changed([.player, .playlist]) == "changed: playlist\nchanged: player\nOK\n")
        #expect(session.receive("idle mixer bogus") == .write("ACK [2@0] {idle} Unrecognized idle event: bogus\n"))
        #expect(session.changed([.mixer]) == nil, "the refused idle does not wait")
        #expect(session.receive("idle mixer") == .write("changed: mixer\nOK\n"), "kept for the next idle")
    }

    @Test("idle knows MPD 0.23's subsystems by name and names every change in MPD's order")
    func subsystemNames() {
        let names = [
            "database", "stored_playlist", "playlist", "player", "mixer", "output", "options", "partition", "sticker",
            "subscription", "message", "neighbor", "mount", "update",
        ]
        #expect(MPDSubsystems.all.idleAnswer == names.map { "changed: \($0)\n" }.joined() + "OK\n")
        #expect(names.map { MPDSubsystems(name: $0)?.idleAnswer } == names.map { "changed: \($0)\nOK\n" })
        #expect(MPDSubsystems(name: "Player") == nil, "MPD's names are lower case")
        var session = MPDSession()
        #expect(session.receive("idle stored_playlist update") == .wait)
        #expect(session.changed(.all) == "changed: stored_playlist\nchanged: update\nOK\n")
    }

    @Test("what a glance shows a change touched is MPD's mixer, player, options and playlist; answers name them")
    func aspectsAsSubsystems() {
        #expect(MPDSubsystems(PlayerAspects.volume) == .mixer)
        #expect(MPDSubsystems(PlayerAspects.playback) == .player)
        #expect(MPDSubsystems(PlayerAspects.modes) == .options)
        #expect(MPDSubsystems(PlayerAspects.queue) == .playlist)
        #expect(MPDSubsystems(PlayerAspects([.volume, .queue])) == [.mixer, .playlist])
        #expect(MPDSubsystems(PlayerAspects()) == [])
        #expect(MPDSubsystems([.playlist, .mixer]).idleAnswer == "changed: playlist\nchanged: mixer\nOK\n")
        #expect(MPDSubsystems().idleAnswer == "OK\n")
    }

    @Test("a command list over MPD's 2 MiB closes the connection")
    func listLimit() {
        var session = MPDSession()
        _ = session.receive("command_list_begin")
        let line = "add " + String(repeating: "a", count: 1_000)
        var step = MPDSession.Step.wait
        for _ in 0..<3_000 where step == .wait { step = session.receive(line) }
        #expect(step == .close)
    }

    @Test("arguments are read with MPD's words for what is wrong")
    func arguments() throws {
        #expect(throws: MPDError(.argument, "Integer expected: abc")) { try MPDArguments.unsigned("abc") }
        #expect(throws: MPDError(.argument, "Number too large: -1")) { try MPDArguments.unsigned("-1") }
        #expect(try MPDArguments.range("1:", count: 3) == 1..<3)
        #expect(try MPDArguments.range("0:9", count: 3) == 0..<3, "an end beyond the queue is cut to it")
        #expect(try MPDArguments.range("3", count: 3).isEmpty, "just past the end: nothing, as mpd answers OK")
        #expect(try MPDArguments.range("-1", count: 3) == 0..<3, "-1: every position")
        #expect(throws: MPDError(.argument, "Bad song index")) { try MPDArguments.range("4", count: 3) }
        for (text, words) in [
            ("x", "Integer or range expected: x"), (":2", "Integer or range expected: :2"),
            ("1:x", "Integer or range expected: 1:x"), ("-2", "Number is negative: -2"),
            ("1:-1", "Number is negative: 1:-1"), ("3:1", "Malformed range: 3:1"),
        ] {
            #expect(throws: MPDError(.argument, words)) { try MPDArguments.range(text, count: 3) }
        }
    }

    @Test("song names stay in the music folder; absolute paths only for a client on the Unix socket")
    func paths() throws {
        let folder = MPDMusicFolder(path: Fixtures.mp3("stereo-44k-5s").deletingLastPathComponent().path + "/")
        #expect(try folder.item("stereo-44k-5s.mp3", isLocalClient: false) == folder.path + "/stereo-44k-5s.mp3")
        #expect(try folder.item("", isLocalClient: false) == folder.path)
        #expect(try folder.item("http://127.0.0.1:1/a.mp3", isLocalClient: false) == "http://127.0.0.1:1/a.mp3")
        #expect(throws: MPDError(.argument, "Malformed URI")) { try folder.item("../x.mp3", isLocalClient: true) }
        #expect(throws: MPDError(.argument, "Malformed URI")) { try folder.item("a/../../x", isLocalClient: true) }
        #expect(throws: MPDError(.permission, "Access denied")) {
            try folder.item("/etc/hostname", isLocalClient: false)
        }
        #expect(try folder.item("/etc/hostname", isLocalClient: true) == "/etc/hostname")
        #expect(throws: MPDError(.noExist, "No such directory")) { try folder.item("none.mp3", isLocalClient: false) }
        #expect(throws: MPDError(.argument, "Unsupported URI scheme")) {
            try folder.item("ftp://x/y", isLocalClient: true)
        }
        #expect(folder.name(of: folder.path + "/a/b.mp3") == "a/b.mp3")
        #expect(folder.name(of: "/elsewhere/b.mp3") == "/elsewhere/b.mp3")
    }

    @Test("addresses: HOST:PORT, [IPv6]:PORT or a path; only loopback and Unix sockets count as loopback")
    func addresses() {
        #expect(MPDListenAddress("127.0.0.1:6600") == .tcp(host: "127.0.0.1", port: 6600))
        #expect(MPDListenAddress("[::1]:6600") == .tcp(host: "::1", port: 6600))
        #expect(MPDListenAddress("/run/user/0/mpd.sock") == .unix(path: "/run/user/0/mpd.sock"))
        #expect(MPDListenAddress("localhost") == nil)
        #expect(MPDListenAddress("127.0.0.1:0") == nil)
        #expect(MPDListenAddress("0.0.0.0:6600")?.isLoopback == false)
        #expect(MPDListenAddress("[::1]:6600")?.isLoopback == true)
    }
}

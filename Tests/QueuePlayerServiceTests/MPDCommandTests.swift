import Foundation
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import TestSupport
import TestTiers
import Testing

/// MPD commands carried out on the daemon's core in-process: what `status`, `currentsong` and `playlistinfo` print,
/// MPD's error answers, and the changes an idling client is told. The expected answers were read from Debian's mpd
/// 0.23.12 given the same commands.
@Suite("MPD commands on the player's one path", .tier(.deterministic), .timeLimit(.minutes(1)))
struct MPDCommandTests {
    private let service: ServiceHarness
    private let runner: MPDCommandRunner
    private let folder = MPDMusicFolder(path: Fixtures.mp3("stereo-44k-5s").deletingLastPathComponent().path)
    private let playlistFolder = Subprocess.temporaryFile("playlists").path

    init() throws {
        service = try ServiceHarness()
        runner = Self.runner(of: service, folder: folder, playlistFolder: playlistFolder)
    }

    private static func runner(
        of service: ServiceHarness, folder: MPDMusicFolder, playlistFolder: String
    )
        -> MPDCommandRunner
    {
        MPDCommandRunner(
            controller: service.controller, musicFolder: folder, playlists: MPDStoredPlaylists(folder: playlistFolder),
            versions: MPDQueueVersions(), feed: MPDChangeFeed(), isLocalClient: false)
    }

    private func run(_ lines: String...) -> String { runner.run(lines: lines, listOK: false).text }

    @Test("status, currentsong and playlistinfo print MPD's fields in MPD's order, songs named in the music folder")
    func reports() throws {
        #expect(run("add stereo-44k-5s.mp3", "add sweep-44k-4s.mp3") == "OK\n")
        let ids = service.controller.queue().map(\.id)
        let status = run("status")
        let lines = status.split(separator: "\n").map(String.init)
        #expect(
            lines.map { $0.split(separator: ":")[0] }.prefix(10)
                == [
                    "volume", "repeat", "random", "single", "consume", "partition", "playlist", "playlistlength",
                    "mixrampdb", "state",
                ], "\(status)")
        #expect(lines.contains("consume: 1") && lines.contains("playlistlength: 2") && lines.contains("volume: 100"))
        #expect(lines.contains("song: 0") && lines.contains("songid: \(ids[0])"), "\(status)")
        #expect(lines.contains("nextsong: 1") && lines.contains("nextsongid: \(ids[1])"), "\(status)")
        #expect(status.hasSuffix("OK\n"))

        let current = run("currentsong")
        #expect(current.hasPrefix("file: stereo-44k-5s.mp3\nLast-Modified: "), "\(current)")
        #expect(current.hasSuffix("Time: 5\nduration: 5.000\nPos: 0\nId: \(ids[0])\nOK\n"), "\(current)")
        let second = run("playlistinfo 1")
        #expect(second.hasPrefix("file: sweep-44k-4s.mp3\n") && second.hasSuffix("Pos: 1\nId: \(ids[1])\nOK\n"))
        #expect(run("playlistid \(ids[1])") == second)
        #expect(run("playlist") == "0:file: stereo-44k-5s.mp3\n1:file: sweep-44k-4s.mp3\nOK\n")
    }

    @Test("status gives the playing song's decoded format and bit rate once it is open, as mpd's audio and bitrate")
    func audioFormat() async throws {
        let service = try ServiceHarness(pacing: .realTime)
        let runner = Self.runner(of: service, folder: folder, playlistFolder: playlistFolder)
        #expect(runner.run(lines: ["add long-8k-60s.mp3", "play 0"], listOK: false).text == "OK\n")
        await service.waitUntilOpened(try #require(service.controller.queue().first).id)
        let status = runner.run(lines: ["status"], listOK: false).text
        let lines = status.split(separator: "\n")
        let duration = try #require(lines.firstIndex { $0.hasPrefix("duration: ") }, "\(status)")
        #expect(lines[duration + 1] == "audio: 8000:f:2", "\(status)")
        #expect(status.contains("\nelapsed: ") && status.contains("\nbitrate: 8\n"), "a file of 8 kbit/s: \(status)")
    }

    @Test("a song not opened yet (a stream still connecting) is playing without a duration, as in mpd's status")
    func noDurationBeforeOpening() throws {
        let stalled = try StalledListener()
        #expect(run("add http://127.0.0.1:\(stalled.port)/flow.mp3", "play 0") == "OK\n")
        let status = run("status")
        #expect(status.contains("state: play\n") && status.contains("elapsed: 0.000\n"), "\(status)")
        #expect(!status.contains("duration") && !status.contains("audio"), "\(status)")
        #expect(status.contains("\nbitrate: 0\n"), "\(status)")
    }

    @Test("errors are MPD's: code, list index, command and words")
    func errors() {
        #expect(run("play 99") == "ACK [2@0] {play} Bad song index\n")
        #expect(run("playid 99") == "ACK [50@0] {playid} No such song\n")
        #expect(run("deleteid 99") == "ACK [50@0] {deleteid} No such song\n")
        #expect(run("setvol 200") == "ACK [2@0] {setvol} Number too large: 200\n")
        #expect(run("setvol abc") == "ACK [2@0] {setvol} Integer expected: abc\n")
        #expect(run("pause 2") == "ACK [2@0] {pause} Boolean (0/1) expected: 2\n")
        #expect(run("seekcur 3") == "ACK [55@0] {seekcur} Not playing\n")
        #expect(run("ping extra") == "ACK [2@0] {ping} wrong number of arguments for \"ping\"\n")
        #expect(run("frobnicate") == "ACK [5@0] {} unknown command \"frobnicate\"\n")
        #expect(run("add /etc/hostname") == "ACK [4@0] {add} Access denied\n")
        #expect(run("add nothing-here.mp3") == "ACK [50@0] {add} No such directory\n")
        #expect(
            runner.run(lines: ["ping", "getvol", "play 5", "ping"], listOK: true).text
                == "list_OK\nvolume: 100\nlist_OK\nACK [2@2] {play} Bad song index\n",
            "a list stops at its first error, which names its place")
        #expect(service.controller.queue().isEmpty, "nothing was queued by the refusals")
    }

    @Test("add and addid insert where POS says, absolute or after the current song (+N), never before it")
    func insertPositions() {
        #expect(run("add stereo-44k-5s.mp3 +0") == "ACK [55@0] {add} No current song\n")
        #expect(run("add stereo-44k-5s.mp3", "add join-1.mp3", "add join-2.mp3") == "OK\n")
        #expect(run("add join-3.mp3 +0") == "OK\n")
        #expect(run("add mono-44k.mp3 2") == "OK\n")
        #expect(run("addid stereo-48k.mp3 +2").hasPrefix("Id: "))
        let names = service.controller.queue().map { ($0.location as NSString).lastPathComponent }
        #expect(
            names == ["stereo-44k-5s.mp3", "join-3.mp3", "mono-44k.mp3", "stereo-48k.mp3", "join-1.mp3", "join-2.mp3"])
        #expect(run("add join-1.mp3 +6") == "ACK [2@0] {add} Number too large: 6\n")
        #expect(run("add join-1.mp3 +\(Int.max)") == "ACK [2@0] {add} Number too large: \(Int.max)\n")
        #expect(run("add join-1.mp3 -0").hasPrefix("ACK [2@0] {add} a song cannot be added before the current one"))
        #expect(run("add join-1.mp3 0").hasPrefix("ACK [2@0] {add} a song cannot be added"))
        #expect(service.controller.queue().count == 6, "nothing queued by the refusals")
    }

    @Test("delete of a range is one change; with the current song among it, the next one that stays is current")
    func deleteRange() async {
        let names = ["join-1", "join-2", "join-3", "mono-44k", "stereo-48k"]
        #expect(runner.run(lines: names.map { "add \($0).mp3" }, listOK: false).text == "OK\n")
        let ids = service.controller.queue().map(\.id)
        var changes = service.mpdChanges().makeAsyncIterator()
        #expect(run("delete 1:3") == "OK\n")
        #expect(service.controller.queue().map(\.id) == [ids[0], ids[3], ids[4]])
        #expect(await service.queueChangesUntilVolume(&changes, level: 0.5) == 1)
        #expect(run("delete 0:2") == "OK\n")
        #expect(service.controller.queue().map(\.id) == [ids[4]])
        #expect(service.controller.snapshot().current?.id == ids[4])
        #expect(await service.queueChangesUntilVolume(&changes, level: 0.6) == 1)
        #expect(run("delete 1") == "OK\n", "just past the end: nothing, as mpd answers")
        #expect(run("delete 2") == "ACK [2@0] {delete} Bad song index\n")
        #expect(await service.queueChangesUntilVolume(&changes, level: 0.7) == 0)
    }

    @Test("readcomments lists the tag's user-defined text frames in its order; what is no song is refused as mpd does")
    func readComments() {
        #expect(
            run("readcomments replaygain.mp3")
                == "replaygain_track_gain: -3.50 dB\nreplaygain_album_gain: -9.00 dB\nreplaygain_track_peak: 0.700000\n"
                + "replaygain_album_peak: 0.700000\nOK\n")
        #expect(run("readcomments join-1.mp3") == "OK\n", "a tag without such frames: nothing")
        #expect(run("readcomments nothere.mp3") == "ACK [50@0] {readcomments} No such song\n")
        #expect(run("readcomments ../Fixtures") == "ACK [50@0] {readcomments} No such song\n")
        #expect(run(#"readcomments """#) == "ACK [50@0] {readcomments} No such song\n", "the music folder itself")
        #expect(run("readcomments /etc/hostname") == "ACK [4@0] {readcomments} Access denied\n")
    }

    @Test("commands lists every command carried out, and only those; a closing command closes")
    func commandList() {
        let listed = run("commands").split(separator: "\n").dropLast().map { String($0.dropFirst("command: ".count)) }
        #expect(listed == listed.sorted())
        for name in listed where !["close", "idle"].contains(name) {
            #expect(!run(name).contains("unknown command"), "\(name) is listed but unknown")
        }
        let closing = runner.run(lines: ["ping", "close", "ping"], listOK: false)
        #expect(closing.text.isEmpty && closing.closes)
    }

    @Test("an idling client is told what each front end changed: playlist, player, mixer, options")
    func changesTold() async throws {
        var changes = service.mpdChanges().makeAsyncIterator()
        #expect(run("add stereo-44k-5s.mp3") == "OK\n")
        #expect(await changes.next()?.contains(.playlist) == true)
        // Another front end: the control socket's command.
        service.run(.volume(0.4, relative: false))
        #expect(await changes.next() == [.mixer])
        #expect(run("getvol") == "volume: 40\nOK\n")
        service.run(.loop(.playlist))
        #expect(await changes.next() == [.options])
        #expect(run("status").contains("repeat: 1\nrandom: 0\nsingle: 0\n"))
        #expect(run("single 1") == "OK\n")
        #expect(await changes.next() == [.options])
        #expect(service.controller.snapshot().loop == .track)
        #expect(run("repeat 0") == "OK\n" && service.controller.snapshot().loop == LoopStatus.none)
        #expect(await changes.next() == [.options])
        #expect(run("status").contains("repeat: 0\nrandom: 0\nsingle: 1\n"), "single stays: a pause after the song")
        #expect(run("random 1") == "OK\n" && run("status").contains("random: 1\n"))
        #expect(await changes.next() == [.options])
        #expect(run("single oneshot") == "OK\n" && run("status").contains("single: oneshot\n"))
        #expect(await changes.next() == [.options])
        #expect(run("repeat 1") == "OK\n" && service.controller.snapshot().loop == .track, "once, the song repeats")
        #expect(await changes.next() == [.options])
        #expect(run("single 0") == "OK\n" && service.controller.snapshot().loop == .playlist)
        #expect(run("single 2") == "ACK [2@0] {single} Unrecognized single mode, expected 0, 1, or oneshot\n")
        #expect(run("replay_gain_status") == "replay_gain_mode: off\nOK\n")
        #expect(run("replay_gain_mode album") == "OK\n")
        #expect(await changes.next() == [.options])
        #expect(run("replay_gain_status") == "replay_gain_mode: album\nOK\n")
        #expect(service.status.replayGain == .album)
        service.run(.replayGain(.auto))
        #expect(await changes.next() == [.options])
        #expect(run("replay_gain_status") == "replay_gain_mode: auto\nOK\n")
        #expect(run("replay_gain_mode Track") == "ACK [2@0] {replay_gain_mode} Unrecognized replay gain mode\n")
    }

    @Test("status's error coming or going wakes an idling client for player; buffering and an empty queue do not")
    func errorIsPlayerChange() {
        let sounding = MPDPlayerState(
            snapshot: PlayerSnapshot(status: .playing, position: 0, volume: 1, current: nil), queue: [])
        var reconnecting = sounding
        reconnecting.snapshot.waiting = "reconnecting to 127.0.0.1:8000: connection refused, next try in 2 s"
        var buffering = sounding
        buffering.snapshot.waiting = "buffering"
        var empty = sounding
        empty.snapshot.waiting = "no item to play"
        #expect(MPDSubsystems.changes(from: sounding, to: reconnecting) == [.player])
        #expect(MPDSubsystems.changes(from: reconnecting, to: buffering) == [.player], "the error went")
        #expect(MPDSubsystems.changes(from: sounding, to: buffering).isEmpty)
        #expect(MPDSubsystems.changes(from: buffering, to: empty).isEmpty)
        #expect(reconnecting.error == reconnecting.snapshot.waiting && buffering.error == nil && empty.error == nil)
    }

    @Test("a password gives what it allows; without one, a client has the default permissions, as in MPD")
    func passwords() throws {
        let access = try MPDAccess(passwords: ["secret@read,add", "boss@control"], defaultPermissions: nil)
        #expect(access.defaultPermissions == [], "with a password, nothing is allowed without one")
        let guest = MPDCommandRunner(
            controller: service.controller, musicFolder: folder, playlists: MPDStoredPlaylists(folder: playlistFolder),
            versions: MPDQueueVersions(), feed: MPDChangeFeed(), access: access, isLocalClient: false)
        let run = { (lines: [String]) in guest.run(lines: lines, listOK: false).text }
        #expect(run(["status"]) == "ACK [4@0] {status} you don't have permission for \"status\"\n")
        #expect(
            run(["commands"]) == "command: binarylimit\ncommand: close\ncommand: commands\ncommand: notcommands\n"
                + "command: password\ncommand: ping\ncommand: tagtypes\nOK\n")
        #expect(run(["password wrong"]) == "ACK [3@0] {password} incorrect password\n")
        #expect(run(["password secret", "add stereo-44k-5s.mp3"]) == "OK\n")
        #expect(run(["play"]) == "ACK [4@0] {play} you don't have permission for \"play\"\n")
        #expect(run(["notcommands"]).contains("command: play\n"))
        #expect(run(["password boss", "play"]) == "OK\n", "control implies player, as in MPD")
        #expect(throws: MPDError.self) { try MPDAccess(passwords: ["nopermissions"], defaultPermissions: nil) }
        #expect(throws: MPDError.self) { try MPDAccess(passwords: [], defaultPermissions: "read,fly") }
        #expect(try MPDAccess(passwords: [], defaultPermissions: nil).defaultPermissions == .all)
    }
}

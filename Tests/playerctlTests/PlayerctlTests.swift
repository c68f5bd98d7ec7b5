import Foundation
import TestSupport
import TestTiers
import Testing

/// Runs the built `playerctl` with `arguments`.
func playerctl(_ arguments: String...) async -> Subprocess.Result {
    await Subprocess.run(Fixtures.playerctl.path, arguments, environment: Fixtures.isolatedEnvironment())
}

/// The files named in "playing ..." log lines, in order.
func playedFiles(_ log: String) -> [String] {
    log.split(separator: "\n").compactMap { line in
        guard let range = line.range(of: "] playing ") else { return nil }
        return URL(fileURLWithPath: String(line[range.upperBound...])).lastPathComponent
    }
}

@Suite("playerctl daemon, run as a user would run it", .tier(.servers))
struct PlayerctlDaemonTests {
    @Test("the help names the options, the items and the exit statuses; the daemon tells its version")
    func help() async {
        let top = await playerctl("--help")
        #expect(top.status == 0)
        #expect(top.standardOutput.contains("daemon"))
        let daemon = await playerctl("daemon", "--help")
        #expect(daemon.status == 0)
        for option in ["--sink", "--unpaced", "--server", "--exit-when-empty", "<item>", "Exit status"] {
            #expect(daemon.standardOutput.contains(option), "help lacks \(option)")
        }
        let client = await playerctl("--version")
        let version = await playerctl("daemon", "--version")
        #expect(version.status == 0 && version.standardOutput == client.standardOutput, "\(version.standardError)")
    }

    @Test("an unknown verb or a wrong combination is a usage error naming it")
    func usageErrors() async {
        let unknown = await playerctl("frobnicate")
        #expect(unknown.status == 64)
        #expect(unknown.standardError.contains("frobnicate"))
        let unpaced = await playerctl("daemon", "--unpaced", "x.mp3")
        #expect(unpaced.status == 64)
        #expect(unpaced.standardError.contains("--unpaced"))
        let sink = await playerctl("daemon", "--sink", "alsa", "x.mp3")
        #expect(sink.status == 64)
        #expect(sink.standardError.contains("alsa"))
    }

    @Test("good items play in order and the daemon exits 0 once the queue is heard")
    func playsInOrder() async {
        let result = await playerctl(
            "daemon", "--sink", "null", "--unpaced", "--exit-when-empty",
            Fixtures.mp3("join-2").path, Fixtures.mp3("join-1").path, Fixtures.mp3("stereo-48k").path)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(playedFiles(result.standardError) == ["join-2.mp3", "join-1.mp3", "stereo-48k.mp3"])
    }

    @Test("`daemon` runs queueplayerd from beside playerctl, through a symbolic link too; without it, says so")
    func daemonExecutable() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("playerctl-launch-\(getpid())")
        let linked = folder.appendingPathComponent("linked")
        let alone = folder.appendingPathComponent("alone")
        for subfolder in [linked, alone] {
            try FileManager.default.createDirectory(at: subfolder, withIntermediateDirectories: true)
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let link = linked.appendingPathComponent("playerctl")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: Fixtures.playerctl)
        let copy = alone.appendingPathComponent("playerctl")
        try FileManager.default.copyItem(at: Fixtures.playerctl, to: copy)

        let viaLink = await Subprocess.run(
            link.path, ["daemon", "--help"], environment: Fixtures.isolatedEnvironment())
        #expect(viaLink.status == 0 && viaLink.standardOutput.contains("--exit-when-empty"))

        var environment = Fixtures.isolatedEnvironment()
        environment["PATH"] = "/usr/bin:/bin"
        let missing = await Subprocess.run(copy.path, ["daemon", "x.mp3"], environment: environment)
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("queueplayerd was not found (looked at PATH)"))
    }

    @Test("a bad item is reported on stderr by name, the rest still plays, and the exit status is 2")
    func badItem() async {
        let missing = Fixtures.mp3("does-not-exist").path
        // The first one bad too: it fails while the daemon opens it ahead of playing, and is still reported.
        let result = await playerctl(
            "daemon", "--sink", "null", "--unpaced", "--exit-when-empty",
            Fixtures.mp3("not-audio").path, Fixtures.mp3("join-1").path, missing, Fixtures.mp3("join-2").path)
        #expect(result.status == 2)
        #expect(playedFiles(result.standardError) == ["join-1.mp3", "join-2.mp3"])
        #expect(result.standardError.contains("\(missing): no such file"))
        #expect(result.standardError.contains("not-audio.mp3: not an MP3 file"))
    }

    @Test("a folder plays its MP3s in name order, numbers by value, other files ignored")
    func folderOrder() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("qp-folder-\(UUID().uuidString)")
        let nested = folder.appendingPathComponent("disc 2")
        try FileManager.default.createDirectory(at: nested, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (source, name) in [("join-1", "10-c.mp3"), ("join-2", "2-b.MP3"), ("join-3", "1-a.mp3")] {
            try FileManager.default.copyItem(at: Fixtures.mp3(source), to: folder.appendingPathComponent(name))
        }
        try FileManager.default.copyItem(at: Fixtures.mp3("join-1"), to: nested.appendingPathComponent("1-d.mp3"))
        try Data("not music".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        let empty = folder.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)

        let result = await playerctl(
            "daemon", "--sink", "null", "--unpaced", "--exit-when-empty", folder.path, empty.path)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(playedFiles(result.standardError) == ["1-a.mp3", "2-b.MP3", "10-c.mp3", "1-d.mp3"])
        #expect(result.standardError.contains("\(empty.path): this folder holds no .mp3 files"))
    }

    @Test("a live stream by URL plays with no length and the status line's 'live'; a seek in it is refused by name")
    func liveStream() async throws {
        var station = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("join-1"))))
        station.isLive = true
        let server = try await HTTPTestServer(routes: ["/radio.mp3": station])
        let radio = server.url("/radio.mp3").absoluteString
        let socket = privateSocket("live")
        let daemon = try RunningDaemon(["--sink", "null", "--socket", socket, radio])
        let states = try await DaemonStates(socket: socket)
        #expect(
            await states.first { $0.current?.url == radio && $0.plays() } != nil,
            "\(states.history) \(server.requests)")
        let metadata = await control(socket, "metadata")
        #expect(metadata.standardOutput.contains("xesam:url"), "\(metadata)")
        #expect(!metadata.standardOutput.contains("mpris:length"), "\(metadata)")
        let seek = await control(socket, "position", "1")
        #expect(seek.status != 0)
        #expect(seek.standardError.contains("\(radio) is a live stream, which cannot be sought in"), "\(seek)")
        #expect(await control(socket, "quit").status == 0)
        #expect(await daemon.exitStatus() == 0)
        #expect(daemon.log.contains("duration=live"), "\(daemon.log)")
        try await server.stop()
    }

    @Test("playlists queue their entries in order, files and URLs; HLS, empty lists and other schemes are refused")
    func playlists() async throws {
        let server = try await HTTPTestServer(routes: [
            "/remote.mp3": HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("join-3"))))
        ])
        let remote = server.url("/remote.mp3").absoluteString
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("qp-lists-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("sub"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (source, name) in [("join-1", "a.mp3"), ("join-2", "sub/b.mp3"), ("join-3", "c.mp3")] {
            try FileManager.default.copyItem(at: Fixtures.mp3(source), to: folder.appendingPathComponent(name))
        }
        func write(_ name: String, _ text: String) throws -> String {
            let url = folder.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url.path
        }
        let m3u = try write("list.m3u", "#EXTM3U\r\n#EXTINF:1,A\r\na.mp3\r\nsub/b.mp3\r\n\(remote)\r\n")
        let rtsp = try write("rtsp.m3u", "a.mp3\nrtsp://127.0.0.1/stream\n")
        let pls = try write("more.pls", "[playlist]\nFile2=\(folder.path)/a.mp3\nFile1=c.mp3\nNumberOfEntries=2\n")
        let hls = try write("live.m3u8", "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nsegment.ts\n")
        let empty = try write("empty.pls", "[playlist]\nNumberOfEntries=0\n")

        // On the command line, each playlist's entries take its place; what gives nothing is logged, the rest plays.
        let result = await playerctl(
            "daemon", "--sink", "null", "--unpaced", "--exit-when-empty", m3u, pls, hls, rtsp)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(playedFiles(result.standardError) == ["a.mp3", "b.mp3", "remote.mp3", "c.mp3", "a.mp3", "a.mp3"])
        #expect(result.standardError.contains("\(rtsp): rtsp://127.0.0.1/stream: only files and http or https URLs"))
        #expect(result.standardError.contains("\(hls): is an HLS playlist"))

        // A client's add is refused as a whole, naming the playlist and the problem.
        let socket = privateSocket("lists")
        // Paused, so that what is added stays queued while the queue is read, however busy the machine.
        let daemon = try RunningDaemon(["--sink", "null", "--pause", "--socket", socket])
        let states = try await DaemonStates(socket: socket)
        #expect(await states.first { _ in true } != nil, "the daemon answers: \(states.history)")
        let refusals = [(hls, "is an HLS playlist"), (empty, "lists nothing to play"), (rtsp, "http or https URLs")]
        for (list, problem) in refusals {
            let refused = await control(socket, "add", list)
            #expect(refused.status != 0)
            #expect(refused.standardError.contains("\(list): "), "\(refused.standardError)")
            #expect(refused.standardError.contains(problem) && refused.standardError.contains("nothing was queued"))
        }
        #expect(await ask(socket, "queue").isEmpty)
        #expect(await control(socket, "add", pls, remote).status == 0)
        let queued = await ask(socket, "queue").split(separator: "\n").compactMap { $0.split(separator: "\t").last }
        #expect(queued == ["\(folder.path)/c.mp3", "\(folder.path)/a.mp3", "\(remote)"])
        #expect(await control(socket, "add", "ftp://127.0.0.1/a.mp3").standardError.contains("only files and http"))
        #expect(await control(socket, "quit").status == 0)
        #expect(await daemon.exitStatus() == 0)
        try await server.stop()
    }

    @Test("playlists by URL queue their entries, relative ones resolved against the URL; bad ones are refused")
    func remotePlaylists() async throws {
        let server = try await HTTPTestServer(routes: [:])
        try server.serve(fixtures: ["join-1", "join-2"], in: "/audio")
        func list(_ path: String, _ text: String, type: String = "audio/x-mpegurl") {
            var route = HTTPTestServer.Route(body: Array(text.utf8))
            route.contentType = type
            server.setRoute(path, route)
        }
        let second = server.url("/audio/join-2.mp3").absoluteString
        list("/radio/station.pls", "[playlist]\nFile2=\(second)\nFile1=../audio/join-1.mp3\n", type: "audio/x-scpls")
        list("/radio/all.m3u", "#EXTM3U\nstation.pls\n")
        list("/radio/local.m3u", "file:///etc/hostname\n")
        list("/radio/loop.m3u", "loop.m3u\n")
        list("/radio/page.m3u", "<html><body>Not here</body></html>\n", type: "text/html")
        list("/radio/hls.m3u8", "#EXTM3U\n#EXT-X-TARGETDURATION:10\nsegment.ts\n")
        let url = { (path: String) in server.url(path).absoluteString }

        // On the command line, a station's .m3u naming its .pls plays what the .pls lists, in its order.
        let played = await playerctl(
            "daemon", "--sink", "null", "--unpaced", "--exit-when-empty", url("/radio/all.m3u"))
        #expect(played.status == 0, "\(played.standardError)")
        #expect(playedFiles(played.standardError) == ["join-1.mp3", "join-2.mp3"], "\(played.standardError)")

        let socket = privateSocket("remote-lists")
        // Paused, so that what is added stays queued while the queue is read, however busy the machine.
        let daemon = try RunningDaemon(["--sink", "null", "--pause", "--socket", socket])
        let states = try await DaemonStates(socket: socket)
        #expect(await states.first { _ in true } != nil, "the daemon answers: \(states.history)")
        let refusals = [
            ("/radio/missing.pls", "the server answered 404"),
            ("/radio/page.m3u", "is not a playlist: the server sent"),
            ("/radio/local.m3u", "/etc/hostname: a playlist from the network may list only http or https URLs"),
            ("/radio/loop.m3u", "nested more than 3 deep"), ("/radio/hls.m3u8", "is an HLS playlist"),
        ]
        for (path, problem) in refusals {
            let refused = await control(socket, "add", url(path))
            #expect(refused.status != 0)
            #expect(refused.standardError.contains("\(url(path))"), "\(refused.standardError)")
            #expect(refused.standardError.contains(problem), "\(refused.standardError)")
            #expect(refused.standardError.contains("nothing was queued"), "\(refused.standardError)")
        }
        #expect(await ask(socket, "queue").isEmpty)
        #expect(await control(socket, "add", url("/radio/station.pls")).status == 0)
        let queued = await ask(socket, "queue").split(separator: "\n").compactMap { $0.split(separator: "\t").last }
        #expect(queued == [Substring(url("/audio/join-1.mp3")), Substring(second)])
        #expect(await control(socket, "quit").status == 0)
        #expect(await daemon.exitStatus() == 0)
        try await server.stop()
    }

    @Test("under systemd (stderr is the journal stream), log lines carry syslog priorities and no timestamps")
    func journalLines() async {
        let result = await Subprocess.run(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import os, sys; status = os.fstat(2); "
                    + "os.environ['JOURNAL_STREAM'] = f'{status.st_dev}:{status.st_ino}'; os.execv(sys.argv[1], sys.argv[1:])",
                Fixtures.playerctl.path, "daemon", "--sink", "null", "--unpaced", "--exit-when-empty",
                Fixtures.mp3("join-1").path, Fixtures.mp3("does-not-exist").path,
            ], environment: Fixtures.isolatedEnvironment())
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<6>playing ") && $0.contains("join-1.mp3") }, "\(result.standardError)")
        #expect(lines.contains { $0.hasPrefix("<3>") && $0.contains("does-not-exist.mp3") }, "\(result.standardError)")
        #expect(lines.allSatisfy { $0.hasPrefix("<") }, "\(result.standardError)")
        #expect(!result.standardError.contains("+0000"), "a timestamp went to the journal")
    }

    /// Two items at two rates: two streams, each on a render thread of its own, each refused.
    @Test("refused real-time priority, the daemon says so once, with what to do, and plays everything on")
    func realTimeRefused() async {
        let result = await Subprocess.run(
            "/usr/bin/prlimit",
            [
                "--rtprio=0:0", "/usr/bin/setpriv", "--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice",
                Fixtures.playerctl.path, "daemon", "--sink", "null", "--exit-when-empty",
                Fixtures.mp3("tone-48k-1s").path, Fixtures.mp3("join-1").path,
            ], environment: Fixtures.isolatedEnvironment())
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardError.split(separator: "\n")
        let refusals = lines.filter { $0.contains("refused real-time priority") }
        #expect(refusals.count == 1 && refusals[0].contains("LimitRTPRIO="), "\(result.standardError)")
        #expect(lines.filter { $0.contains("playing ") }.count == 2, "\(result.standardError)")
    }

    @Test("SIGTERM and SIGINT stop playback cleanly, with exit status 0", arguments: [SIGTERM, SIGINT])
    func gracefulShutdown(signal: Int32) async throws {
        let socket = privateSocket("signal-\(signal)")
        // Started paused and played once subscribed: a stalled test process must not miss the whole 5 s item.
        let daemon = try RunningDaemon(
            [
                "--sink", "null", "--pause", "--log-level", "debug", "--socket", socket,
                Fixtures.mp3("stereo-44k-5s").path,
            ])
        let states = try await DaemonStates(socket: socket)
        #expect(await states.first { $0.status == "Paused" && $0.current != nil } != nil, "\(states.history)")
        #expect(await control(socket, "play").status == 0)
        #expect(await states.first { $0.plays() } != nil, "\(states.history)")
        daemon.send(signal)
        let status = await daemon.exitStatus()
        #expect(status == 0, "the daemon ignored the signal or failed: \(daemon.log)")
        #expect(daemon.log.contains("Signal caught"), "\(daemon.log)")
    }
}

/// Alone: it runs private PulseAudio and PipeWire servers, which load both cores; beside them, sample-exact edits on a
/// real-time null sink lost races they should not be exposed to, and PipeWire's graph dropped out.
@Suite("playerctl daemon through a sound server", .tier(.alone))
struct PlayerctlDaemonAudioTests {
    @Test(
        "with no server yet, the daemon says so, answers commands, and plays once one starts",
        arguments: PulseServer.Kind.allCases)
    func serverAbsentAtStart(_ kind: PulseServer.Kind) async throws {
        let server = try await PulseServer(name: "late", kind: kind)
        await server.stop()
        let socket = "\(Scratch.uniquePath("late-\(kind)")).sock"
        let daemon = try RunningDaemon(
            ["--server", server.address, "--socket", socket, "--exit-when-empty", Fixtures.mp3("join-1").path])
        let states = try await DaemonStates(socket: socket)
        #expect(await states.first { $0.waiting == "output unavailable" } != nil, "\(states.history)")
        #expect(daemon.log.contains("waiting for it to come back"), "\(daemon.log)")
        #expect(daemon.log.contains(server.address), "\(daemon.log)")
        #expect(daemon.log.contains("scripts/pulse-server start"), "the message says how to start a server")
        let status = await playerctl("status", "--socket", socket)
        #expect(status.standardOutput == "Playing\n", "\(status.standardError)")
        try await server.restart()
        #expect(await states.first { $0.plays() && $0.waiting == nil } != nil, "\(states.history)")
        #expect(await daemon.exitStatus(within: 10) == 0, "\(daemon.log)")
        #expect(daemon.log.contains("audio output is back"), "\(daemon.log)")
    }

    @Test(
        "through the server, three items are heard bit-exact and joined with no gap, and the daemon exits",
        arguments: PulseServer.Kind.allCases)
    func pulseAudioEndToEnd(_ kind: PulseServer.Kind) async throws {
        let server = try await PulseServer(name: "cli", kind: kind)
        let recording = try await MonitorRecording(server: server)
        let names = ["join-1", "join-2", "join-3"]
        let (result, load) = await MachineLoad.during {
            await Subprocess.run(
                Fixtures.playerctl.path,
                ["daemon", "--server", server.address, "--exit-when-empty"] + names.map { Fixtures.mp3($0).path },
                environment: Fixtures.isolatedEnvironment())
        }
        let samples = await recording.finish(afterFurther: 8_820)
        #expect(result.status == 0, "\(result.standardError)")
        let parts = try names.map { try Fixtures.referenceInt16($0) }
        let (reference, joins) = kind.expectedRecording(of: parts, heard: samples)
        let difference = recordingDifference(
            samples, reference: reference, allowing: kind.droppedQuanta(during: load).exceptAt(joins: joins))
        #expect(difference == nil, "\(load.inWords)")
    }
}

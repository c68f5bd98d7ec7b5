import Foundation
import TestSupport
import TestTiers
import Testing

/// Runs Debian's `/usr/bin/playerctl -p queueplayer ARGUMENTS` on `bus`.
func standardPlayerctl(_ bus: SessionBus, _ arguments: String...) async -> Subprocess.Result {
    await Subprocess.run(
        "/usr/bin/playerctl", ["-p", "queueplayer"] + arguments,
        environment: bus.environment(ProcessInfo.processInfo.environment))
}

/// Runs `busctl --user ARGUMENTS` on `bus`.
func busctl(_ bus: SessionBus, _ arguments: String...) async -> Subprocess.Result {
    await Subprocess.run(
        "/usr/bin/busctl", ["--user"] + arguments, environment: bus.environment(ProcessInfo.processInfo.environment))
}

/// The MPRIS object's bus name and path, and the TrackList interface, as busctl takes them.
private let mprisObject = ["org.mpris.MediaPlayer2.queueplayer", "/org/mpris/MediaPlayer2"]
private let trackListInterface = "org.mpris.MediaPlayer2.TrackList"

@Suite("MPRIS2 on a private session bus, driven by the standard playerctl", .tier(.servers), .serialized)
struct MPRISTests {
    @Test("the standard playerctl's verbs, --follow, TrackList edits and introspection, checked on the monitor")
    func standardVerbs() async throws {
        let bus = try await SessionBus()
        let server = try await PulseServer(name: "mpris")
        let recording = try await MonitorRecording(server: server)
        let socket = privateSocket("mpris")
        // Items of a minute: none ends by itself while the test reads it, however busy the machine.
        let names = ["long-8k-60s", "id3v24-8k-60s", "join-1"]
        let daemon = try RunningDaemon(
            ["--server", server.address, "--socket", socket] + names.map { Fixtures.mp3($0).path }, bus: bus)
        #expect(await bus.waitForName("org.mpris.MediaPlayer2.queueplayer"), "\(daemon.log)")
        let states = try await DaemonStates(socket: socket)
        #expect(await states.first { $0.plays() } != nil, "\(states.history)")
        let follow = try LineReader(
            "/usr/bin/playerctl", ["-p", "queueplayer", "--follow", "status"],
            environment: bus.environment(ProcessInfo.processInfo.environment))
        #expect(await follow.nextLine() == "Playing", "--follow printed \(follow.printed)")

        #expect(await standardPlayerctl(bus, "status").standardOutput == "Playing\n")
        #expect(await standardPlayerctl(bus, "pause").status == 0)
        #expect(await ask(socket, "status") == "Paused")
        await recording.waitForFurther(26_460)  // 0.6 s of the pause
        #expect(await standardPlayerctl(bus, "play").status == 0)
        #expect(await ask(socket, "status") == "Playing")
        #expect(await standardPlayerctl(bus, "play-pause").status == 0)
        #expect(await ask(socket, "status") == "Paused")
        #expect(await standardPlayerctl(bus, "play-pause").status == 0)
        #expect(await ask(socket, "status") == "Playing")
        // Playing on, each position read runs ahead of the seek by at most the time the commands took (seconds under
        // load), measured from before the seek is sent. The two relative seeks cancel out: what is left is that time,
        // not the 2 s either of them alone would add or take away.
        let clock = ContinuousClock()
        let seekSent = clock.now
        #expect(await standardPlayerctl(bus, "position", "3").status == 0)
        let seeksStarted = clock.now  // before the reading, so the next check's window holds both readings
        let afterSeek = Double(await ask(socket, "position")) ?? 0
        let seekElapsed = (clock.now - seekSent) / .seconds(1)
        #expect(
            afterSeek >= 3 && afterSeek < 3 + seekElapsed + 0.2,
            "position \(afterSeek) after 'position 3', \(seekElapsed) s after it was sent")
        #expect(await standardPlayerctl(bus, "position", "2-").status == 0)
        #expect(await standardPlayerctl(bus, "position", "2+").status == 0)
        let position = Double(await ask(socket, "position")) ?? 0
        let elapsed = (clock.now - seeksStarted) / .seconds(1)
        #expect(
            position >= afterSeek && position < afterSeek + elapsed + 0.2,
            "position \(position) after '2-' and '2+', \(elapsed) s after \(afterSeek)")
        #expect(await standardPlayerctl(bus, "volume", "0.5").status == 0)
        #expect(await ask(socket, "volume") == "0.500000")
        // LoopStatus both ways: set over MPRIS, read on the socket; set on the socket, read over MPRIS.
        #expect(await standardPlayerctl(bus, "loop", "Playlist").status == 0)
        #expect(await ask(socket, "loop") == "Playlist")
        #expect(await control(socket, "loop", "None").status == 0)
        #expect(await standardPlayerctl(bus, "loop").standardOutput == "None\n")
        #expect(await standardPlayerctl(bus, "shuffle", "On").status == 0)
        #expect(await ask(socket, "shuffle") == "On")
        #expect(await control(socket, "shuffle", "Off").status == 0)
        #expect(await standardPlayerctl(bus, "shuffle").standardOutput == "Off\n")
        #expect(await standardPlayerctl(bus, "next").status == 0)
        #expect(await states.first { $0.isOn("id3v24-8k-60s") && $0.plays() } != nil, "\(states.history)")
        #expect(
            await standardPlayerctl(bus, "metadata", "--format", "{{artist}} - {{title}}").standardOutput
                == "Ana Ñúñez, Bo Li 李 - Duet\n")
        let metadata = await standardPlayerctl(bus, "metadata").standardOutput
        for key in ["mpris:trackid", "mpris:length", "xesam:title", "xesam:artist", "xesam:album", "xesam:url"] {
            #expect(metadata.contains("queueplayer \(key)"), "metadata lacks \(key): \(metadata)")
        }
        #expect(await standardPlayerctl(bus, "previous").status == 0)
        #expect(await states.first { $0.isOn("long-8k-60s") && $0.plays() } != nil, "\(states.history)")
        #expect(await standardPlayerctl(bus, "stop").status == 0)
        #expect(await standardPlayerctl(bus, "status").standardOutput == "Stopped\n")
        #expect(await standardPlayerctl(bus, "open", Fixtures.mp3("id3v24-8k-60s").absoluteString).status == 0)
        #expect(await states.first { $0.isOn("id3v24-8k-60s") && $0.plays() } != nil, "\(states.history)")
        #expect(await standardPlayerctl(bus, "metadata", "title").standardOutput == "Duet\n")
        // A podcast episode by URL, as a desktop's "open with" hands it over.
        let web = try await HTTPTestServer(routes: [
            "/episode.mp3": HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("long-8k-60s"))))
        ])
        let episode = web.url("/episode.mp3").absoluteString
        #expect(await standardPlayerctl(bus, "open", episode).status == 0)
        #expect(await states.first { $0.current?.url == episode && $0.plays() } != nil, "\(states.history)")
        #expect(await standardPlayerctl(bus, "metadata", "xesam:url").standardOutput == episode + "\n")
        #expect(await standardPlayerctl(bus, "metadata", "title").standardOutput == "episode.mp3\n")

        // TrackList: add after the current item, see it in Tracks and in the queue, then remove it.
        let current =
            "/org/mpris/MediaPlayer2/Track/"
            + (await ask(socket, "queue").split(separator: "\t").first?
                .dropFirst(2) ?? "")
        let added = await busctl(
            bus, "call", mprisObject[0], mprisObject[1], trackListInterface, "AddTrack", "sob",
            Fixtures.mp3("join-3").absoluteString, current, "false")
        #expect(added.status == 0, "\(added.standardError)")
        let queue = await ask(socket, "queue")
        let addedID = try #require(
            queue.split(separator: "\n").first { $0.hasSuffix("join-3.mp3") }?.split(separator: "\t").first?
                .trimmingCharacters(in: .whitespaces))
        let tracks = await busctl(bus, "get-property", mprisObject[0], mprisObject[1], trackListInterface, "Tracks")
        #expect(tracks.standardOutput.contains("/org/mpris/MediaPlayer2/Track/\(addedID)"), "\(tracks)")
        let removed = await busctl(
            bus, "call", mprisObject[0], mprisObject[1], trackListInterface, "RemoveTrack", "o",
            "/org/mpris/MediaPlayer2/Track/\(addedID)")
        #expect(removed.status == 0, "\(removed.standardError)")
        #expect(!(await ask(socket, "queue")).contains("join-3.mp3"))
        let introspection = await busctl(bus, "introspect", mprisObject[0], mprisObject[1])
        for member in [
            "org.mpris.MediaPlayer2.Player", trackListInterface, ".GetTracksMetadata", ".Seeked", ".Metadata",
        ] {
            #expect(introspection.standardOutput.contains(member), "introspection lacks \(member)")
        }

        for _ in 0..<4 { _ = await follow.nextLine() }
        follow.stop()
        #expect(
            Array(follow.printed.prefix(5)) == ["Playing", "Paused", "Playing", "Paused", "Playing"],
            "--follow printed \(follow.printed)")

        #expect(await control(socket, "quit").status == 0)
        #expect(await daemon.exitStatus() == 0)
        try await web.stop()
        #expect(longestInnerSilence(recording.finish()) > 44_100 / 2, "the pause was not silent on the monitor")
    }

    @Test("while a station does not answer, Metadata says what is waited for; once it answers, the key goes")
    func waitingForAStation() async throws {
        let bus = try await SessionBus()
        let port = try LoopbackPort.free()
        let socket = privateSocket("mpris-waiting")
        let daemon = try RunningDaemon(
            ["--sink", "null", "--socket", socket, "http://127.0.0.1:\(port)/live.mp3"], bus: bus)
        #expect(await bus.waitForName("org.mpris.MediaPlayer2.queueplayer"), "\(daemon.log)")
        let states = try await DaemonStates(socket: socket)
        #expect(await states.first { $0.waiting?.hasPrefix("reconnecting") == true } != nil, "\(states.history)")
        let waiting = await standardPlayerctl(bus, "metadata", "queueplayer:waiting").standardOutput
        #expect(waiting.hasPrefix("reconnecting to 127.0.0.1:\(port): connection refused, next try in "), "\(waiting)")

        var station = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("stereo-44k-5s"))))
        station.isLive = true
        let server = try await HTTPTestServer(routes: ["/live.mp3": station], port: port)
        #expect(await states.first { $0.plays() && $0.waiting == nil } != nil, "\(states.history)")
        let metadata = await standardPlayerctl(bus, "metadata").standardOutput
        #expect(metadata.contains("xesam:url") && !metadata.contains("queueplayer:waiting"), "\(metadata)")
        daemon.send(SIGTERM)
        #expect(await daemon.exitStatus() == 0)
        try await server.stop()
    }

    @Test("a second daemon on the same bus takes the .instance<pid> name; without a bus, one log line and no MPRIS")
    func namesAndNoBus() async throws {
        let bus = try await SessionBus()
        let item = Fixtures.mp3("stereo-44k-5s").path
        let first = try RunningDaemon(["--sink", "null", "--socket", privateSocket("mpris-a"), item], bus: bus)
        #expect(await bus.waitForName("org.mpris.MediaPlayer2.queueplayer"), "\(first.log)")
        let second = try RunningDaemon(["--sink", "null", "--socket", privateSocket("mpris-b"), item], bus: bus)
        let instance = "org.mpris.MediaPlayer2.queueplayer.instance\(second.pid)"
        #expect(await bus.waitForName(instance), "\(second.log)")
        let players = await Subprocess.run(
            "/usr/bin/playerctl", ["-l"], environment: bus.environment(ProcessInfo.processInfo.environment))
        #expect(players.standardOutput.split(separator: "\n").count == 2, "\(players.standardOutput)")

        let aloneSocket = privateSocket("mpris-c")
        let alone = try RunningDaemon(["--sink", "null", "--socket", aloneSocket, item])
        let states = try await DaemonStates(socket: aloneSocket)
        #expect(await states.first { $0.plays() } != nil, "\(states.history)")
        for daemon in [first, second, alone] {
            daemon.send(SIGTERM)
            #expect(await daemon.exitStatus() == 0)
        }
        // Read once it has exited: the bus is looked for after playback starts, so the line may follow the first
        // playing state.
        #expect(alone.log.components(separatedBy: "MPRIS: no session bus").count == 2, "\(alone.log)")
    }
}

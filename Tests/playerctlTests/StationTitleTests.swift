import Foundation
import TestSupport
import TestTiers
import Testing

/// A station's title, changed on Debian's Icecast server while the daemon plays it, as the client and MPRIS show it.
@Suite("A station's title, from Icecast to every front end", .tier(.servers), .timeLimit(.minutes(1)))
struct StationTitleTests {
    @Test("a title set on Icecast reaches `metadata --follow`, MPRIS and MPD's currentsong once heard, intact")
    func titleReachesFrontEnds() async throws {
        let icecast = try await IcecastServer()
        let source = try await IcecastSource(
            server: icecast, mount: "/radio.mp3", file: Fixtures.mp3("stereo-44k-5s"), name: "QP Radio")
        let bus = try await SessionBus()
        let socket = privateSocket("station-title")
        let mpdPort = try LoopbackPort.free()
        // Unpaced, the daemon hears what Icecast sends as it comes: a title is heard about when it is sent.
        let daemon = try RunningDaemon(
            [
                "--sink", "null", "--unpaced", "--socket", socket, "--mpd", "127.0.0.1:\(mpdPort)",
                icecast.url("/radio.mp3").absoluteString,
            ], bus: bus)
        let states = try await DaemonStates(socket: socket)
        #expect(await states.first { $0.plays() } != nil, "\(states.history)")
        let follow = try LineReader(
            Fixtures.playerctl.path, ["metadata", "--follow", "--format", "{{title}}", "--socket", socket],
            environment: Fixtures.isolatedEnvironment())

        for title in ["Zoë Keating – Escape Artist", "東京 ♫ Night"] {
            try await icecast.setTitle(title, of: "/radio.mp3")
            var line: String?
            repeat { line = await follow.nextLine() } while line != nil && line != title
            #expect(line == title, "--follow printed \(follow.printed)")
            #expect(await standardPlayerctl(bus, "metadata", "title").standardOutput == title + "\n")
            // As Debian's mpd 0.23 shows a station: the title heard, the station's name, no length.
            let current = await MPDSessionReplay.answers(port: mpdPort, lines: ["currentsong"])
            let station = icecast.url("/radio.mp3").absoluteString
            let expected = "file: \(station)\nTitle: \(title)\nName: QP Radio\nPos: 0\nId: 1\nOK\n"
            #expect(current == [expected], "\(current)")
        }
        follow.stop()
        #expect(await control(socket, "quit").status == 0)
        #expect(await daemon.exitStatus() == 0)
        try await source.stop()
    }

    @Test("a title set on Icecast reaches the Snapcast plug-in's properties once heard in the room")
    func titleReachesSnapcast() async throws {
        let icecast = try await IcecastServer()
        // At the file's bit rate (128 kbit/s), as a station's encoder sends: the Snapcast sink plays in real time, so
        // a faster source would put each title minutes ahead of what is heard.
        let source = try await IcecastSource(
            server: icecast, mount: "/radio.mp3", file: Fixtures.mp3("stereo-44k-5s"), name: "QP Radio",
            bytesPerSecond: 16_000)
        let socket = privateSocket("station-snapcast")
        let snapserver = try await SnapcastServer(sampleRate: 44_100, controlScript: try snapcastPluginScript(socket))
        let daemon = try RunningDaemon([
            "--sink", "snapcast", "--server", "127.0.0.1:\(snapserver.sourcePort)", "--sample-rate", "44100",
            "--socket", socket, icecast.url("/radio.mp3").absoluteString,
        ])
        let title = "Ana Ñúñez – 李 Duet"
        try await snapserver.withControl(within: .seconds(40)) { snapcast in
            let playing = try await snapcast.properties { $0["playbackStatus"] as? String == "playing" }
            #expect(playing != nil)
            try await icecast.setTitle(title, of: "/radio.mp3")
            let titled = try await snapcast.properties {
                ($0["metadata"] as? [String: Any])?["title"] as? String == title
            }
            #expect(titled != nil, "no properties with the title came")
        }
        #expect(await control(socket, "quit").status == 0)
        #expect(await daemon.exitStatus() == 0, "\(daemon.log)")
        try await source.stop()
    }
}

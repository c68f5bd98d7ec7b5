import Foundation
import TestSupport
import TestTiers
import Testing

/// Snapserver's own MPD plug-in (Debian's `/usr/share/snapserver/plug-ins/meta_mpd.py`) as snapserver runs it for a
/// stream fed by mpd, here fed by the daemon: it reads the daemon through MPD's protocol and controls it with MPD's
/// commands, so Snapcast's clients see the song and its state and their controls reach the daemon.
///
/// The plug-in asks MusicBrainz for the cover of a song that names an artist. It runs in a network namespace of its
/// own (`unshare --net`: no network but an unconfigured loopback), reaches the daemon through the MPD Unix socket, and
/// the songs name no artist, so it never tries.
@Suite("Snapserver's meta_mpd.py plug-in drives the daemon through MPD's protocol", .tier(.servers), .serialized)
struct MetaMPDPluginTests {
    private static let plugin = "/usr/share/snapserver/plug-ins/meta_mpd.py"

    /// Writes a copy of fixture `name` at `path` whose only tag is `title` (an ID3v2.4 `TIT2` frame).
    private static func write(_ name: String, titled title: String, at path: String) throws {
        func syncsafe(_ size: Int) -> Data {
            Data([21, 14, 7, 0].map { UInt8((size >> $0) & 0x7f) })
        }
        let text = Data([3]) + Data(title.utf8)
        let frame = Data("TIT2".utf8) + syncsafe(text.count) + Data([0, 0]) + text
        let tag = Data("ID3".utf8) + Data([4, 0, 0]) + syncsafe(frame.count) + frame
        try (tag + Data(contentsOf: Fixtures.mp3(name))).write(to: URL(fileURLWithPath: path))
    }

    /// Writes snapserver's control script for the daemon's MPD socket `mpdSocket` into `folder`: the plug-in, cut off
    /// from every network.
    private static func controlScript(mpdSocket: String, in folder: String) throws -> String {
        let script = "\(folder)/meta-mpd"
        // Killed with snapserver (which the test's teardown kills), not left asking for the daemon every 5 s.
        let command = "setpriv --pdeathsig KILL unshare --net /usr/bin/python3 \(plugin) --mpd-host \(mpdSocket)"
        try "#!/bin/sh\nexec \(command) \"$@\"\n".write(toFile: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        return script
    }

    /// The title of the song `properties` show, or "".
    private static func title(_ properties: [String: Any]) -> String {
        (properties["metadata"] as? [String: Any])?["title"] as? String ?? ""
    }

    @Test(
        "Snapcast's clients see the title and state; play, pause, seek, next, volume, shuffle, loop reach the daemon",
        .timeLimit(.minutes(2)))
    func titlesAndControls() async throws {
        #expect(FileManager.default.fileExists(atPath: Self.plugin), "snapserver's plug-in: scripts/setup installs it")
        let music = Scratch.newFolder("meta-mpd-music")
        try Self.write("long-8k-60s", titled: "Morning Tide", at: "\(music)/one.mp3")
        try Self.write("join-1", titled: "Évening Bells", at: "\(music)/two.mp3")
        let socket = privateSocket("meta-mpd")
        let mpdSocket = socket + ".mpd"
        let snapserver = try await SnapcastServer(
            sampleRate: 44_100, controlScript: try Self.controlScript(mpdSocket: mpdSocket, in: music))
        let daemon = try RunningDaemon([
            "--sink", "snapcast", "--server", "127.0.0.1:\(snapserver.sourcePort)", "--sample-rate", "44100",
            "--socket", socket, "--state-file", Subprocess.temporaryFile("sqlite").path, "--pause",
            "--mpd", mpdSocket, "--music-directory", music, "\(music)/one.mp3", "\(music)/two.mp3",
        ])
        // The plug-in connects within its 5 s retry of an MPD server that was not there yet.
        try await snapserver.withControl(within: .seconds(90)) { snapcast in
            var seen: [String] = []
            let shown = try await snapcast.properties(seen: &seen) { Self.title($0) == "Morning Tide" }
            #expect(shown?["playbackStatus"] as? String == "paused", "told instead: \(seen)")

            _ = try await snapcast.call("Stream.Control", ["id": "QueuePlayer", "command": "play"])
            #expect(try await snapcast.properties { $0["playbackStatus"] as? String == "playing" } != nil)
            #expect(await control(socket, "status").standardOutput == "Playing\n")

            _ = try await snapcast.call("Stream.Control", ["id": "QueuePlayer", "command": "pause"])
            #expect(try await snapcast.properties { $0["playbackStatus"] as? String == "paused" } != nil)
            #expect(await control(socket, "status").standardOutput == "Paused\n")

            _ = try await snapcast.call(
                "Stream.Control", ["id": "QueuePlayer", "command": "setPosition", "params": ["position": 20.0]])
            let moved = try await snapcast.properties(seen: &seen) {
                abs(($0["position"] as? Double ?? 0) - 20) < 0.01
            }
            #expect(moved != nil, "the position never stood at 20 s; told instead: \(seen)")
            #expect(Double(await control(socket, "position").standardOutput.trimmingCharacters(in: .newlines)) == 20)

            _ = try await snapcast.call("Stream.Control", ["id": "QueuePlayer", "command": "next"])
            #expect(try await snapcast.properties { Self.title($0) == "Évening Bells" } != nil)
            #expect(await control(socket, "metadata", "title").standardOutput == "Évening Bells\n")

            _ = try await snapcast.call("Stream.SetProperty", ["id": "QueuePlayer", "property": "volume", "value": 40])
            #expect(try await snapcast.properties { $0["volume"] as? Int == 40 } != nil)
            #expect(await control(socket, "volume").standardOutput == "0.400000\n")

            _ = try await snapcast.call(
                "Stream.SetProperty", ["id": "QueuePlayer", "property": "shuffle", "value": true])
            #expect(try await snapcast.properties { $0["shuffle"] as? Bool == true } != nil)
            #expect(await control(socket, "shuffle").standardOutput == "On\n")

            _ = try await snapcast.call(
                "Stream.SetProperty", ["id": "QueuePlayer", "property": "loopStatus", "value": "playlist"])
            #expect(await control(socket, "loop").standardOutput == "Playlist\n")
        }
        #expect(await control(socket, "quit").status == 0)
        #expect(await daemon.exitStatus() == 0, "\(daemon.log)")
    }
}

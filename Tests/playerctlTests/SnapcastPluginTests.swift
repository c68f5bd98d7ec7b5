import Foundation
import TestSupport
import TestTiers
import Testing

extension SnapcastControl {
    /// The properties of the next `Stream.OnProperties` of stream `QueuePlayer` for which `accept` is true; nil when
    /// the connection closes first (its time limit).
    func properties(where accept: ([String: Any]) -> Bool) async throws -> [String: Any]? {
        var seen: [String] = []
        return try await properties(seen: &seen, where: accept)
    }

    /// As ``properties(where:)``, adding to `seen` (for a failure's message) each properties that `accept` refused.
    func properties(
        seen: inout [String], where accept: ([String: Any]) -> Bool
    ) async throws -> [String: Any]? {
        while let notification = try await nextNotification() {
            guard notification["method"] as? String == "Stream.OnProperties",
                let params = notification["params"] as? [String: Any], params["id"] as? String == "QueuePlayer",
                let properties = params["properties"] as? [String: Any]
            else { continue }
            if accept(properties) { return properties }
            seen.append("\(properties)")
        }
        return nil
    }
}

/// Writes, beside `socket`, what contrib/snapcast/queueplayer-snapcast does, with the playerctl built and the test's
/// socket, and returns its path: snapserver's control script for the daemon at `socket`.
func snapcastPluginScript(_ socket: String) throws -> String {
    let folder = URL(fileURLWithPath: socket).deletingLastPathComponent()
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let script = folder.appendingPathComponent("queueplayer-snapcast").path
    try "#!/bin/sh\nexec \(Fixtures.playerctl.path) snapcast-plugin --socket \(socket) \"$@\"\n"
        .write(toFile: script, atomically: true, encoding: .utf8)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
    return script
}

/// The URL of the item properties name, or "".
private func url(_ properties: [String: Any]) -> String {
    (properties["metadata"] as? [String: Any])?["url"] as? String ?? ""
}

@Suite("Snapcast's stream plugin: its clients see the daemon and control it", .tier(.servers), .serialized)
struct SnapcastPluginTests {
    @Test(
        "snapserver shows the item, state, volume and position; its controls reach the daemon, and playerctl's reach it",
        .timeLimit(.minutes(1)))
    func controlsBothWays() async throws {
        let socket = privateSocket("snapcast")
        let snapserver = try await SnapcastServer(sampleRate: 44_100, controlScript: try snapcastPluginScript(socket))
        // A first item of a minute: a 5 s one could end before the pause on a busy machine, and the seek to 3 s then
        // fell on the next item, of 1.5 s (one failure in the parallel phase).
        let daemon = try RunningDaemon([
            "--sink", "snapcast", "--server", "127.0.0.1:\(snapserver.sourcePort)", "--sample-rate", "44100",
            "--socket", socket, Fixtures.mp3("long-8k-60s").path, Fixtures.mp3("join-1").path,
        ])
        try await snapserver.withControl(within: .seconds(40)) { snapcast in
            let playing = try await snapcast.properties {
                $0["playbackStatus"] as? String == "playing" && url($0).hasSuffix("long-8k-60s.mp3")
            }
            #expect(playing?["canGoNext"] as? Bool == true, "\(playing ?? [:])")
            #expect((playing?["metadata"] as? [String: Any])?["duration"] as? Double ?? 0 > 4.9)

            _ = try await snapcast.call("Stream.Control", ["id": "QueuePlayer", "command": "pause"])
            #expect(await control(socket, "status").standardOutput == "Paused\n")
            #expect(try await snapcast.properties { $0["playbackStatus"] as? String == "paused" } != nil)

            _ = try await snapcast.call(
                "Stream.Control", ["id": "QueuePlayer", "command": "setPosition", "params": ["position": 3.0]])
            // Paused late on a busy machine, the item may have passed 3 s before the seek: only 3 s itself is news.
            var seen: [String] = []
            let moved = try await snapcast.properties(seen: &seen) {
                $0["playbackStatus"] as? String == "paused" && abs(($0["position"] as? Double ?? 0) - 3) < 0.1
            }
            #expect(moved != nil, "the position never stood at 3 s; told instead: \(seen)")
            // A seek a quarter of a second on, still paused, is news too: time does not move a paused position.
            _ = try await snapcast.call(
                "Stream.Control", ["id": "QueuePlayer", "command": "setPosition", "params": ["position": 3.25]])
            let nudged = try await snapcast.properties(seen: &seen) {
                $0["playbackStatus"] as? String == "paused" && abs(($0["position"] as? Double ?? 0) - 3.25) < 0.01
            }
            #expect(nudged != nil, "the position never stood at 3.25 s; told instead: \(seen)")

            _ = try await snapcast.call("Stream.Control", ["id": "QueuePlayer", "command": "next"])
            #expect(try await snapcast.properties { url($0).hasSuffix("join-1.mp3") } != nil)
            #expect(await control(socket, "metadata", "--format", "{{xesam:url}}").standardOutput.contains("join-1"))

            _ = try await snapcast.call(
                "Stream.SetProperty", ["id": "QueuePlayer", "property": "volume", "value": 40])
            #expect(await control(socket, "volume").standardOutput == "0.400000\n")

            #expect(await control(socket, "play").status == 0)
            #expect(try await snapcast.properties { $0["playbackStatus"] as? String == "playing" } != nil)
            #expect(await control(socket, "volume", "0.7").status == 0)
            #expect(try await snapcast.properties { $0["volume"] as? Int == 70 } != nil)

            _ = try await snapcast.call(
                "Stream.SetProperty", ["id": "QueuePlayer", "property": "loopStatus", "value": "playlist"])
            #expect(await control(socket, "loop").standardOutput == "Playlist\n")
            #expect(await control(socket, "loop", "Track").status == 0)
            #expect(try await snapcast.properties { $0["loopStatus"] as? String == "track" } != nil)

            _ = try await snapcast.call(
                "Stream.SetProperty", ["id": "QueuePlayer", "property": "shuffle", "value": true])
            #expect(await control(socket, "shuffle").standardOutput == "On\n")
            #expect(try await snapcast.properties { $0["shuffle"] as? Bool == true } != nil)
        }
        #expect(await control(socket, "quit").status == 0)
        #expect(await daemon.exitStatus() == 0, "\(daemon.log)")
    }

    @Test("garbage, and what it cannot carry out, get errors that say why; with no daemon, a control names the socket")
    func badRequests() async throws {
        let socket = privateSocket("snapcast-absent")
        let requests = [
            "garbage",
            #"{"id":1,"jsonrpc":"2.0","method":"Plugin.Stream.Player.Control","params":{"command":"next"}}"#,
            #"{"id":2,"jsonrpc":"2.0","method":"Plugin.Stream.Player.Control","params":{"command":"seek"}}"#,
            #"{"id":3,"jsonrpc":"2.0","method":"Plugin.Stream.Player.SetProperty","params":{"loopStatus":"often"}}"#,
            #"{"id":4,"jsonrpc":"2.0","method":"Plugin.Stream.Player.Nope"}"#,
        ]
        let result = await Subprocess.run(
            "/bin/sh",
            ["-c", "printf '%s\\n' \"$@\" | \"$0\" snapcast-plugin --socket \(socket)", Fixtures.playerctl.path]
                + requests)
        #expect(result.status == 0, "\(result.standardError)")
        let replies = result.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(replies.first?["method"] as? String == "Plugin.Stream.Ready")
        func error(_ id: Int?) -> String {
            let reply = replies.first { ($0["id"] as? Int) == id && $0["error"] != nil }
            return (reply?["error"] as? [String: Any])?["message"] as? String
                ?? "no error for \(id.map(String.init) ?? "nil")"
        }
        #expect(error(nil).contains("not a JSON-RPC request: garbage"))
        #expect(error(1).contains(socket) && error(1).contains("queueplayerd"), "\(error(1))")
        #expect(error(2).contains("needs params.offset"), "\(error(2))")
        #expect(error(3).contains("'often' is not one of none, track, playlist"), "\(error(3))")
        #expect(error(4).contains("method not found"), "\(error(4))")
    }
}

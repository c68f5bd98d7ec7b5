import Foundation
import TestSupport
import TestTiers
import Testing

/// A new control socket path, in a folder of its own, each time it is called.
func privateSocket(_ name: String) -> String {
    "\(Scratch.uniquePath(name))/control.sock"
}

/// Runs `playerctl VERB... --socket SOCKET`.
func control(_ socket: String, _ arguments: String...) async -> Subprocess.Result {
    await control(socket, arguments)
}

/// Runs `playerctl ARGUMENTS --socket SOCKET`.
func control(_ socket: String, _ arguments: [String]) async -> Subprocess.Result {
    await Subprocess.run(
        Fixtures.playerctl.path, arguments + ["--socket", socket], environment: Fixtures.isolatedEnvironment())
}

/// The longest run of silent frames between the first and the last sound.
func longestInnerSilence(_ samples: [Int16]) -> Int {
    guard let first = samples.firstIndex(where: { $0 != 0 }), let last = samples.lastIndex(where: { $0 != 0 })
    else { return 0 }
    var (longest, run) = (0, 0)
    for sample in samples[first...last] {
        run = sample == 0 ? run + 1 : 0
        longest = max(longest, run)
    }
    return longest / 2
}

@Suite("The control socket and the playerctl verbs", .tier(.servers), .serialized)
struct ControlSocketTests {
    @Test("with no daemon, a verb says 'No players found', names the socket and how to start one, and exits 1")
    func noPlayer() async {
        let socket = privateSocket("none")
        let result = await control(socket, "status")
        #expect(result.status == 1)
        #expect(result.standardError.contains("No players found"))
        #expect(result.standardError.contains(socket))
        #expect(result.standardError.contains("playerctl daemon"))
    }

    @Test("the help lists the playerctl verbs and ours")
    func help() async {
        let help = await playerctl("--help")
        for verb in [
            "play", "pause", "play-pause", "stop", "next", "previous", "position", "volume", "status", "metadata",
            "open", "add", "insert", "remove", "move", "priority", "tag", "untag", "range", "clear", "queue",
            "background",
            "foreground", "quit",
        ] {
            #expect(help.standardOutput.contains("  \(verb) "), "help lacks \(verb)")
        }
        let metadata = await playerctl("metadata", "--help")
        #expect(metadata.standardOutput.contains("--format") && metadata.standardOutput.contains("--follow"))
    }

    @Test("the socket is 0600 in a 0700 folder; a second daemon refuses, naming the first; quit removes it")
    func socketOwnership() async throws {
        let socket = privateSocket("perm")
        let daemon = try RunningDaemon(["--sink", "null", "--socket", socket, Fixtures.mp3("stereo-44k-5s").path])
        // The first state told shows the daemon serves the socket, which it does only once the file is private
        // (a connection may succeed between the bind and the chmod, before anything is answered).
        let states = try await DaemonStates(socket: socket)
        #expect(await states.first { _ in true } != nil, "\(states.history)")
        let attributes = try FileManager.default.attributesOfItem(atPath: socket)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: (socket as NSString).deletingLastPathComponent)
        #expect((folder[.posixPermissions] as? Int) == 0o700)

        let second = await playerctl("daemon", "--sink", "null", "--socket", socket, Fixtures.mp3("join-1").path)
        #expect(second.status == 3)
        #expect(second.standardError.contains("another playerctl daemon (pid"))
        #expect(second.standardError.contains(socket))
        // The refused daemon leaves the first one's socket alone.
        #expect(FileManager.default.fileExists(atPath: socket))
        #expect(await control(socket, "status").status == 0)

        #expect(await control(socket, "quit").status == 0)
        #expect(await daemon.exitStatus() == 0)
        #expect(!FileManager.default.fileExists(atPath: socket))
    }

    @Test("a state file of garbage is moved aside: the daemon starts, plays and quits cleanly, and says so once")
    func garbageStateFile() async throws {
        let socket = privateSocket("damaged")
        let state = Subprocess.temporaryFile("sqlite")
        try Data(repeating: 0xA5, count: 8_192).write(to: state)
        let daemon = try RunningDaemon(
            ["--sink", "null", "--socket", socket, "--state-file", state.path, Fixtures.mp3("stereo-44k-5s").path])
        let states = try await DaemonStates(socket: socket)
        #expect(await states.first { $0.plays(past: 0.2) } != nil, "\(states.history)")
        #expect(await control(socket, "quit").status == 0)
        #expect(await daemon.exitStatus() == 0)
        let folder = state.deletingLastPathComponent()
        let aside = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasPrefix(state.lastPathComponent + ".damaged-") }
        #expect(aside.count == 1)
        #expect(daemon.log.components(separatedBy: "was damaged").count == 2, "\(daemon.log)")
        for name in aside { try? FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
    }

    @Test("pause silences and play resumes without a lost frame; next switches item: on the monitor")
    func pausePlayNext() async throws {
        let server = try await PulseServer(name: "ctl")
        let recording = try await MonitorRecording(server: server)
        let socket = privateSocket("ctl")
        let daemon = try RunningDaemon(
            [
                "--server", server.address, "--socket", socket, "--exit-when-empty",
                Fixtures.mp3("stereo-44k-5s").path, Fixtures.mp3("join-1").path,
            ])
        let states = try await DaemonStates(socket: socket)
        let heard = await states.first { $0.status == "Playing" && $0.position >= 0.8 }
        #expect(heard != nil, "\(states.history)")
        #expect(await control(socket, "pause").status == 0)
        #expect(await control(socket, "status").standardOutput == "Paused\n")
        await recording.waitForFurther(30_870)  // 0.7 s of the pause
        #expect(await control(socket, "play").status == 0)
        #expect(await control(socket, "status").standardOutput == "Playing\n")
        #expect(await states.first { $0.status == "Playing" && $0.position >= 1.4 } != nil, "\(states.history)")
        #expect(await control(socket, "next").status == 0)
        #expect(await states.first { $0.isOn("join-1") && $0.status == "Playing" } != nil, "\(states.history)")
        #expect(await control(socket, "metadata", "--format", "{{title}}").standardOutput == "join-1.mp3\n")
        #expect(await daemon.exitStatus(within: 10) == 0, "\(daemon.log)")
        let samples = await recording.finish(afterFurther: 8_820)

        #expect(longestInnerSilence(samples) > 44_100 / 2, "the pause is not heard as silence")
        let sounding = soundingFrames(samples)
        let first = soundingFrames(try Fixtures.referenceInt16("stereo-44k-5s"))
        let second = soundingFrames(try Fixtures.referenceInt16("join-1"))
        #expect(sounding.count > second.count)
        let cut = sounding.count - second.count
        #expect(sampleDifference(Array(sounding[cut...]), second) == nil, "join-1 was not heard whole after next")
        #expect(cut < first.count, "next did not cut the first item short")
        #expect(
            sampleDifference(Array(sounding[..<cut]), Array(first[..<min(cut, first.count)])) == nil,
            "the first item lost or repeated frames across pause and play")
    }

    @Test("garbage, bad requests and a crowd of clients get error replies, and playback goes on untouched")
    func badInput() async throws {
        let server = try await PulseServer(name: "garbage")
        let recording = try await MonitorRecording(server: server)
        let socket = privateSocket("garbage")
        let daemon = try RunningDaemon(
            ["--server", server.address, "--socket", socket, "--exit-when-empty", Fixtures.mp3("stereo-44k-5s").path])
        let states = try await DaemonStates(socket: socket)
        #expect(await states.first { $0.plays() } != nil, "\(states.history)")
        let probe = await Subprocess.run(
            Fixtures.packageRoot.appendingPathComponent("Tests/Fixtures/control-probe.py").path, [socket])
        try #require(probe.status == 0, "\(probe.standardError)")
        let replies = try #require(
            try JSONSerialization.jsonObject(with: Data(probe.standardOutput.utf8)) as? [String: [[String: Any]]])
        let expected = [
            "garbage": "not valid UTF-8", "invalid-utf8": "not valid UTF-8", "not-an-object": "not a JSON object",
            "no-command": "needs 'command'", "unknown-verb": "unknown command 'frobnicate'",
            "wrong-type": "'level' must be a number", "missing-argument": "needs 'item'",
            "missing-file": "no such file or folder: /nonexistent/song.mp3",
        ]
        for (name, words) in expected {
            let reply = replies[name]?.first
            #expect(reply?["ok"] as? Bool == false, "\(name): \(String(describing: reply))")
            #expect((reply?["error"] as? String)?.contains(words) == true, "\(name): \(String(describing: reply))")
        }
        let long = replies["too-long-then-good"] ?? []
        #expect((long.first?["error"] as? String)?.contains("longer than 65536 bytes") == true, "\(long)")
        #expect(long.last?["ok"] as? Bool == true, "the connection was not usable after the long line")
        let after = replies["after"]?.first
        #expect(after?["id"] as? String == "last")
        #expect((after?["state"] as? [String: Any])?["status"] as? String == "Playing")

        #expect(await daemon.exitStatus(within: 10) == 0, "\(daemon.log)")
        let reference = try Fixtures.referenceInt16("stereo-44k-5s")
        let samples = await recording.finish(afterFurther: 8_820)
        #expect(recordingDifference(samples, reference: reference) == nil, "playback was disturbed")
    }
}

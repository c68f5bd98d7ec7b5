import Foundation
import TestSupport
import TestTiers
import Testing

/// Runs `playerctl VERB...` against `socket` and returns its standard output, trimmed.
func ask(_ socket: String, _ arguments: String...) async -> String {
    let result = await control(socket, arguments)
    return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
}

@Suite("The durable state: restart and resume, SIGKILL and resume", .tier(.servers), .serialized)
struct StateStoreTests {
    let store = Subprocess.temporaryFile("sqlite").path

    func daemon(_ socket: String, _ extra: [String] = []) throws -> RunningDaemon {
        try RunningDaemon(["--sink", "null", "--socket", socket, "--state-file", store] + extra)
    }

    @Test("the repeat and shuffle settings survive a restart")
    func settingsRestored() async throws {
        let socket = privateSocket("settings")
        let first = try daemon(socket)
        _ = try await DaemonStates(socket: socket)
        #expect(await control(socket, "loop", "Track").status == 0)
        #expect(await control(socket, "shuffle", "On").status == 0)
        #expect(await control(socket, "quit").status == 0)
        #expect(await first.exitStatus() == 0)
        let second = try daemon(socket)
        _ = try await DaemonStates(socket: socket)
        #expect(await ask(socket, "loop") == "Track")
        #expect(await ask(socket, "shuffle") == "On")
        #expect(await control(socket, "quit").status == 0)
        #expect(await second.exitStatus() == 0)
    }

    /// Quits `running` (on `socket`), starts another daemon on the same state, and returns the queue it lists; that
    /// one is quit too.
    private func queueAfterRestart(of running: RunningDaemon, socket: String) async throws -> [Substring] {
        #expect(await control(socket, "quit").status == 0)
        #expect(await running.exitStatus() == 0)
        let second = try daemon(socket)
        _ = try await DaemonStates(socket: socket)
        let queue = await ask(socket, "queue").split(separator: "\n")
        #expect(await control(socket, "quit").status == 0)
        #expect(await second.exitStatus() == 0)
        return queue
    }

    @Test("playerctl priority: shuffled, the item is next; queue shows its priority, and a restart keeps both")
    func priorityRestored() async throws {
        let socket = privateSocket("priority")
        let items = ["join-1", "join-2", "join-3", "stereo-44k-5s"].map { Fixtures.mp3($0).path }
        let first = try daemon(socket, ["--pause"] + items)
        _ = try await DaemonStates(socket: socket)
        #expect(await control(socket, "shuffle", "On").status == 0)
        let last = try #require(await ask(socket, "queue").split(separator: "\n").last)
        let id = String(last.dropFirst(2).prefix { $0 != "\t" })
        #expect(await control(socket, "priority", "9", id).status == 0)
        let queue = await ask(socket, "queue").split(separator: "\n")
        #expect(queue.count == 4 && queue[1].hasPrefix("  \(id)\t") && queue[1].hasSuffix("\tpriority 9"), "\(queue)")
        let refused = await control(socket, "priority", "300", id)
        #expect(refused.status == 64 && refused.standardError.contains("from 0 to 255"), "\(refused.standardError)")
        let unknown = await control(socket, "priority", "1", "999")
        #expect(unknown.status == 1 && unknown.standardError.contains("no queued item has id 999"))
        #expect(try await queueAfterRestart(of: first, socket: socket) == queue)
    }

    @Test("playerctl range: queue shows the part an item plays, the current item is refused, a restart keeps it")
    func rangeRestored() async throws {
        let socket = privateSocket("range")
        let first = try daemon(socket, ["--pause"] + ["join-1", "stereo-44k-5s"].map { Fixtures.mp3($0).path })
        _ = try await DaemonStates(socket: socket)
        let ids = await ask(socket, "queue").split(separator: "\n").map {
            String($0.dropFirst(2).prefix { $0 != "\t" })
        }
        #expect(await control(socket, "range", ids[1], "--from", "1.5", "--to", "3").status == 0)
        let queue = await ask(socket, "queue").split(separator: "\n")
        #expect(queue.count == 2 && queue[1].hasSuffix("\tplays 0:01-0:03"), "\(queue)")
        let refused = await control(socket, "range", ids[0], "--from", "1")
        #expect(
            refused.status == 1 && refused.standardError.contains("is the current item"), "\(refused.standardError)")
        #expect(try await queueAfterRestart(of: first, socket: socket) == queue)
    }

    @Test("a restart restores the queue with its ids, paused at the saved item and position, with the volume")
    func restartRestores() async throws {
        let socket = privateSocket("restart")
        let items = ["stereo-44k-5s", "join-1", "join-2"].map { Fixtures.mp3($0).path }
        let first = try daemon(socket)
        var states = try await DaemonStates(socket: socket)
        // Paused with nothing queued, then queued, so that what is saved does not depend on how fast this test runs:
        // under load, a pause sent once the daemon played arrived after the 5 s first item, and once after join-1.
        #expect(await control(socket, "pause").status == 0)
        #expect(await control(socket, ["add"] + items).status == 0)
        #expect(await states.first { $0.status == "Paused" && $0.isOn("stereo-44k-5s") } != nil, "\(states.history)")
        #expect(await control(socket, "next").status == 0)
        #expect(await control(socket, "volume", "0.3").status == 0)
        #expect(await control(socket, "position", "0.8").status == 0)
        let cued = await states.first { $0.isOn("join-1") && $0.status == "Paused" && abs($0.position - 0.8) < 0.01 }
        #expect(cued != nil, "\(states.history)")
        let queue = await ask(socket, "queue")
        let position = Double(await ask(socket, "position")) ?? -1
        #expect(await control(socket, "quit").status == 0)
        #expect(await first.exitStatus() == 0)

        let second = try daemon(socket)
        states = try await DaemonStates(socket: socket)
        #expect(await states.first { $0.status == "Paused" && $0.isOn("join-1") } != nil, "\(states.history)")
        #expect(second.log.contains("restored 2 queued item(s)"), "\(second.log)")
        #expect(await ask(socket, "queue") == queue)
        #expect(await ask(socket, "volume") == "0.300000")
        let restored = Double(await ask(socket, "position")) ?? -1
        #expect(abs(restored - position) < 0.01, "restored at \(restored), saved at \(position)")
        #expect(await control(socket, "play").status == 0)
        // On from there: further into join-1, or into join-2 if join-1 (1.5 s) ended before this task looked.
        let goesOn = await states.first {
            ($0.isOn("join-1") && $0.plays(past: restored + 0.2)) || ($0.isOn("join-2") && $0.plays())
        }
        #expect(goesOn != nil, "playback did not go on from there: \(states.history)")
        // The restored history leads back to the first item. Paused first, so that how many steps back that is
        // does not depend on how fast this test runs: under load join-1 (1.5 s) may end before a command arrives.
        #expect(await control(socket, "pause").status == 0)
        let pausedOn = try #require(await states.first { $0.status == "Paused" }, "\(states.history)")
        for _ in 0..<(pausedOn.isOn("join-2") ? 2 : 1) {
            #expect(await control(socket, "previous").status == 0)
        }
        #expect(await states.first { $0.isOn("stereo-44k-5s") } != nil, "history lost: \(states.history)")
        second.send(SIGTERM)
        #expect(await second.exitStatus() == 0)

        let third = try daemon(socket, ["--resume"])
        states = try await DaemonStates(socket: socket)
        #expect(await states.first { $0.plays() } != nil, "\(states.history)")
        #expect(third.log.contains("restored"))
        third.send(SIGTERM)
        #expect(await third.exitStatus() == 0)
    }

    @Test("--pause starts on the first item, paused at its start, until play; beside --resume it is refused")
    func startsPaused() async throws {
        let socket = privateSocket("paused")
        // Unpaced: a daemon that played at once would be through the item before this test could look.
        let daemon = try self.daemon(socket, ["--unpaced", "--pause", Fixtures.mp3("join-1").path])
        let states = try await DaemonStates(socket: socket)
        let paused = await states.first { $0.status == "Paused" && $0.isOn("join-1") }
        #expect(paused?.position == 0, "\(states.history)")
        #expect(await control(socket, "play").status == 0)
        #expect(await states.first { $0.status == "Stopped" && $0.current == nil } != nil, "\(states.history)")
        #expect(await control(socket, "quit").status == 0)
        #expect(await daemon.exitStatus() == 0)

        let refused = await playerctl("daemon", "--sink", "null", "--pause", "--resume")
        #expect(refused.status == 64)
        #expect(refused.standardError.contains("--pause and --resume"), "\(refused.standardError)")
    }

    @Test("a restart restores remote items by their URLs, paused at the saved one and position, and plays them")
    func restartRestoresURLs() async throws {
        let server = try await HTTPTestServer(routes: [:])
        try server.serve(fixtures: ["stereo-44k-5s", "join-1"])
        let episode = server.url("/stereo-44k-5s.mp3").absoluteString
        let next = server.url("/join-1.mp3").absoluteString
        let socket = privateSocket("restart-urls")
        let first = try daemon(socket)
        var states = try await DaemonStates(socket: socket)
        #expect(await control(socket, "pause").status == 0)
        #expect(await control(socket, "add", episode, next).status == 0)
        #expect(await control(socket, "position", "2.5").status == 0)
        let cued = await states.first {
            $0.current?.url == episode && $0.status == "Paused" && abs($0.position - 2.5) < 0.01
        }
        #expect(cued != nil, "\(states.history)")
        let queue = await ask(socket, "queue")
        #expect(await control(socket, "quit").status == 0)
        #expect(await first.exitStatus() == 0)

        let second = try daemon(socket)
        states = try await DaemonStates(socket: socket)
        let restored = await states.first { $0.current?.url == episode && $0.status == "Paused" }
        #expect(restored != nil, "\(states.history)")
        #expect(abs((restored?.position ?? 0) - 2.5) < 0.01, "\(states.history)")
        #expect(await ask(socket, "queue") == queue)
        #expect(await control(socket, "play").status == 0)
        #expect(await states.first { $0.current?.url == episode && $0.plays(past: 2.7) } != nil, "\(states.history)")
        second.send(SIGTERM)
        #expect(await second.exitStatus() == 0)
        try await server.stop()
    }

    @Test("after SIGKILL, a restart loses at most a second of position and no acknowledged queue edit")
    func killRestores() async throws {
        let socket = privateSocket("kill")
        let first = try daemon(socket, [Fixtures.mp3("stereo-44k-5s").path])
        var states = try await DaemonStates(socket: socket)
        #expect(await states.first { $0.plays(past: 0.3) } != nil, "\(states.history)")
        let added = await ask(socket, "add", Fixtures.mp3("join-2").path)
        let before = Double(await ask(socket, "position")) ?? -1
        // No command for 1.5 s of playback: only the once-a-second checkpoint saves the position now.
        _ = try #require(await states.first { $0.position >= before + 1.5 }, "\(states.history)")
        // A read saves nothing. Its answer was the position at some moment after `asked`, so at the kill the
        // position was at least that answer, and at most it plus the time since `asked`. (A subscription's state
        // gives no such bound: it was taken some unknown time before it arrived.)
        let asked = ContinuousClock.now
        let atKill = try #require(Double(await ask(socket, "position")))
        first.send(SIGKILL)
        _ = await first.exitStatus()
        let atKillAtMost = atKill + asked.duration(to: .now).inSeconds

        let second = try daemon(socket)
        states = try await DaemonStates(socket: socket)
        #expect(await states.first { $0.status == "Paused" } != nil, "\(states.history)")
        #expect(second.log.contains("restored 2 queued item(s)"), "\(second.log)")
        let queue = await ask(socket, "queue")
        #expect(queue.contains("\(added)\t\(Fixtures.mp3("join-2").path)"), "the acknowledged add was lost: \(queue)")
        let restored = Double(await ask(socket, "position")) ?? -1
        #expect(restored >= atKill - 1.1, "lost more than a second: restored at \(restored), killed at \(atKill)")
        #expect(restored <= atKillAtMost + 0.05, "restored at \(restored), past the kill at \(atKillAtMost)")
        second.send(SIGTERM)
        #expect(await second.exitStatus() == 0)
    }
}

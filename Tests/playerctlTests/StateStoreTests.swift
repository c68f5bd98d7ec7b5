import Foundation
import TestSupport
import Testing

/// Runs `playerctl VERB...` against `socket` and returns its standard output, trimmed.
func ask(_ socket: String, _ arguments: String...) async -> String {
    let result = await control(socket, arguments)
    return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
}

@Suite("The durable state: restart and resume, SIGKILL and resume", .serialized)
struct StateStoreTests {
    let store = Subprocess.temporaryFile("sqlite").path

    func daemon(_ socket: String, _ extra: [String] = []) throws -> RunningDaemon {
        try RunningDaemon(["--sink", "null", "--socket", socket, "--state-file", store] + extra)
    }

    @Test("a restart restores the queue with its ids, paused at the saved item and position, with the volume")
    func restartRestores() async throws {
        let socket = privateSocket("restart")
        let items = ["stereo-44k-5s", "join-1", "join-2"].map { Fixtures.mp3($0).path }
        let first = try daemon(socket, items)
        #expect(await first.waitForLog("] playing "))
        #expect(await control(socket, "next").status == 0)
        #expect(await control(socket, "volume", "0.3").status == 0)
        try await Task.sleep(for: .milliseconds(700))
        #expect(await control(socket, "pause").status == 0)
        let queue = await ask(socket, "queue")
        let position = Double(await ask(socket, "position")) ?? -1
        #expect(await control(socket, "quit").status == 0)
        #expect(await first.exitStatus() == 0)

        let second = try daemon(socket)
        #expect(await second.waitForLog("restored 2 queued item(s)"), "\(second.log)")
        #expect(await ask(socket, "status") == "Paused")
        #expect(await ask(socket, "queue") == queue)
        #expect(await ask(socket, "volume") == "0.300000")
        let restored = Double(await ask(socket, "position")) ?? -1
        #expect(abs(restored - position) < 0.01, "restored at \(restored), saved at \(position)")
        #expect(await control(socket, "play").status == 0)
        #expect(await second.waitForLog("playing \(Fixtures.mp3("join-1").path)"))
        try await Task.sleep(for: .milliseconds(200))
        #expect((Double(await ask(socket, "position")) ?? 0) > restored, "playback did not go on from there")
        #expect(await control(socket, "previous").status == 0)
        #expect(await second.waitForLog("playing \(Fixtures.mp3("stereo-44k-5s").path)"), "history lost")
        second.send(SIGTERM)
        #expect(await second.exitStatus() == 0)

        let third = try daemon(socket, ["--resume"])
        #expect(await third.waitForLog("restored"))
        #expect(await ask(socket, "status") == "Playing")
        third.send(SIGTERM)
        #expect(await third.exitStatus() == 0)
    }

    @Test("after SIGKILL, a restart loses at most a second of position and no acknowledged queue edit")
    func killRestores() async throws {
        let socket = privateSocket("kill")
        let first = try daemon(socket, [Fixtures.mp3("stereo-44k-5s").path])
        #expect(await first.waitForLog("] playing "))
        try await Task.sleep(for: .milliseconds(300))
        let added = await ask(socket, "add", Fixtures.mp3("join-2").path)
        let before = Double(await ask(socket, "position")) ?? -1
        let asked = ContinuousClock.now
        // No command for 1.5 s: only the once-a-second checkpoint saves the position now.
        try await Task.sleep(for: .milliseconds(1500))
        let elapsed = asked.duration(to: .now)
        first.send(SIGKILL)
        _ = await first.exitStatus()
        // The null sink plays in real time: at the kill the position was at least this.
        let atKill = before + Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18

        let second = try daemon(socket)
        #expect(await second.waitForLog("restored 2 queued item(s)"), "\(second.log)")
        let queue = await ask(socket, "queue")
        #expect(queue.contains("\(added)\t\(Fixtures.mp3("join-2").path)"), "the acknowledged add was lost: \(queue)")
        let restored = Double(await ask(socket, "position")) ?? -1
        #expect(restored >= atKill - 1.1, "lost more than a second: restored at \(restored), killed at \(atKill)")
        #expect(restored <= atKill + 0.5, "restored at \(restored), past the kill at \(atKill)")
        second.send(SIGTERM)
        #expect(await second.exitStatus() == 0)
    }
}

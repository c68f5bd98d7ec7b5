import Foundation
import TestSupport
import TestTiers
import Testing

/// A manifest file declaring `modes`, in a temporary folder.
func manifestFile(modes: [String]) throws -> URL {
    let url = Subprocess.temporaryFile("plist")
    let entries = modes.map { "<string>\($0)</string>" }.joined()
    let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict><key>UIBackgroundModes</key><array>\(entries)</array></dict></plist>
        """
    try Data(plist.utf8).write(to: url)
    return url
}

@Suite("Backgrounding the daemon: signals, manifests and job control, end to end", .tier(.servers), .serialized)
struct BackgroundTests {
    @Test("--background starts backgrounded: silent without the audio mode until a resuming return, playing with it")
    func startsBackgrounded() async throws {
        let item = Fixtures.mp3("stereo-44k-5s").path
        let state = Subprocess.temporaryFile("sqlite").path
        let socket = privateSocket("bg-start")
        let silent = try RunningDaemon(
            [
                "--sink", "null", "--background", "--resume-on-foreground", "--manifest", "/nonexistent/Info.plist",
                "--state-file", state, "--socket", socket, item,
            ])
        var states = try await DaemonStates(socket: socket)
        #expect(await states.first { $0.application != "active" && !$0.plays() } != nil, "\(states.history)")
        // Nothing may play for a while (a third of a second of events, none of them playing).
        #expect(await states.first(within: 0.3) { $0.plays() } == nil, "it played in the background")
        #expect(silent.log.contains("not playing: started in the background"), "\(silent.log)")
        silent.send(SIGUSR2)
        states = try await DaemonStates(socket: socket)
        #expect(
            await states.first { $0.application == "active" && $0.plays() } != nil, "\(states.history)\n\(silent.log)")
        silent.send(SIGTERM)
        let silentStatus = await silent.exitStatus()
        #expect(silentStatus == 0, "\(silent.log)")
        #expect(!silent.log.contains("New music name"), "\(silent.log)")

        let audible = try RunningDaemon(
            [
                "--sink", "null", "--background", "--manifest", try manifestFile(modes: ["audio"]).path,
                "--background-log-interval", "0.1", "--state-file", state, "--socket", socket, item,
            ])
        states = try await DaemonStates(socket: socket)
        #expect(await states.first { $0.application == "background" && $0.plays(past: 0.3) } != nil)
        audible.send(SIGTERM)
        #expect(await audible.exitStatus() == 0)
        // The log is whole once the daemon has exited.
        #expect(audible.log.contains("New music name: stereo-44k-5s.mp3"), "\(audible.log)")
        #expect(audible.log.contains("App is backgrounded. Time is: 0.10"), "\(audible.log)")
    }

    @Test("a signal sent as soon as the control socket accepts a connection is handled, not fatal")
    func signalAtStart() async throws {
        let socket = privateSocket("signal-at-start")
        let daemon = try RunningDaemon(
            [
                "--sink", "null", "--manifest", "/nonexistent/Info.plist",
                "--state-file", Subprocess.temporaryFile("sqlite").path, "--socket", socket,
                Fixtures.mp3("stereo-44k-5s").path,
            ])
        // Returns once connected, before the daemon has answered: the socket file appears while the daemon is
        // still opening its output, and SIGUSR1's default action would end the process.
        let states = try await DaemonStates(socket: socket)
        daemon.send(SIGUSR1)
        #expect(await states.first { $0.application != "active" && !$0.plays() } != nil, "\(states.history)")
        daemon.send(SIGTERM)
        #expect(await daemon.exitStatus() == 0, "\(daemon.log)")
    }

    /// On the null sink and on a PulseAudio server, whose client library starts threads of its own.
    @Test(
        "every thread of the daemon blocks the signals it handles, so that only their sequences receive them",
        arguments: [false, true])
    func handledSignalsBlockedEverywhere(throughPulseAudio: Bool) async throws {
        let socket = privateSocket("signal-mask")
        let server = throughPulseAudio ? try await PulseServer(name: "signal-mask") : nil
        let daemon = try RunningDaemon(
            (server.map { ["--server", $0.address] } ?? ["--sink", "null"]) + [
                "--state-file", Subprocess.temporaryFile("sqlite").path, "--socket", socket,
                Fixtures.mp3("stereo-44k-5s").path,
            ])
        let states = try await DaemonStates(socket: socket)
        #expect(await states.first { $0.plays() } != nil, "\(states.history)")
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/task")
        let handled = [SIGUSR1, SIGUSR2, SIGCONT, SIGTERM, SIGINT].reduce(UInt64(0)) { $0 | 1 << UInt64($1 - 1) }
        for task in tasks {
            let status = try String(contentsOfFile: "/proc/\(daemon.pid)/task/\(task)/status", encoding: .utf8)
            let blocked = status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") }
                .flatMap { UInt64($0.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16) }
            #expect(blocked.map { $0 & handled == handled } == true, "thread \(task): \(status)")
        }
        daemon.send(SIGTERM)
        #expect(await daemon.exitStatus() == 0, "\(daemon.log)")
    }

    @Test("a malformed manifest is an error naming the file, and the service does not start")
    func malformedManifest() async throws {
        let manifest = try manifestFile(modes: ["audoi"])
        let result = await playerctl(
            "daemon", "--sink", "null", "--manifest", manifest.path, Fixtures.mp3("join-1").path)
        #expect(result.status == 78)
        #expect(result.standardError.contains(manifest.path))
        #expect(result.standardError.contains("unknown mode 'audoi'"))
        #expect(!result.standardError.contains("] playing "))
    }

    @Test("job control: '&' backgrounds, 'fg' activates, 'bg' backgrounds; the status line only in the foreground")
    func jobControl() async throws {
        let log = Subprocess.temporaryFile("log")
        let result = await Subprocess.run(
            Fixtures.packageRoot.appendingPathComponent("Tests/Fixtures/job-control.py").path,
            [
                log.path, "--", Fixtures.playerctl.path, "daemon", "--sink", "null", "--manifest",
                try manifestFile(modes: ["audio"]).path, "--state-file", Subprocess.temporaryFile("sqlite").path,
                Fixtures.mp3("stereo-44k-5s").path,
            ], environment: Fixtures.isolatedEnvironment())
        let report = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        let terminal = report?["terminal"] as? String ?? ""
        let daemonLog = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(report?["status"] as? Int == 0, "\(result.standardError) \(daemonLog)")
        #expect((report?["missed"] as? [String])?.isEmpty == true, "\(daemonLog)")
        let beforeForeground = terminal.components(separatedBy: "<<FG>>").first ?? ""
        let inForeground = terminal.components(separatedBy: "<<FG>>").last?.components(separatedBy: "<<BG>>").first
        #expect(!beforeForeground.contains("stereo-44k-5s.mp3"), "status line drawn while backgrounded: \(terminal)")
        #expect(inForeground?.contains("stereo-44k-5s.mp3") == true, "no status line in the foreground: \(terminal)")
    }
}

@Suite("Background tasks in a child process", .tier(.servers))
struct BackgroundTaskProcessTests {
    static var probe: String {
        Fixtures.builtExecutable("LifecycleProbe").path
    }

    @Test("a task still running when the background time is spent terminates the process with status 86")
    func watchdog() async {
        let result = await Subprocess.run(Self.probe, ["0.4", "0.2", "overrun"])
        #expect(result.status == 86, "\(result.standardError)")
        #expect(result.standardError.contains("expiration handler called"))
        #expect(result.standardError.contains("background task 'probe export' (#1) was still running"))
        #expect(!result.standardError.contains("still running after the budget"))
    }

    @Test("a task ended by its expiration handler lets the process live on")
    func endedInTime() async {
        let result = await Subprocess.run(Self.probe, ["0.4", "0.2", "end"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("expiration handler called"))
        #expect(result.standardError.contains("still running after the budget"))
    }
}

import Foundation
import TestSupport
import TestTiers
import Testing

/// Alone: each records the null sink's monitor and compares it with the reference to the frame. In the parallel phase
/// of a fresh-clone CI run the audio-mode test, 5 s alone, took 33 s: the daemon's stream ran dry for 160 ms at a join
/// (7,063 frames of silence), and the test's SIGUSR1 came after the queue had ended.
@Suite("Backgrounding the daemon while it plays, heard on a PulseAudio null sink", .tier(.alone), .serialized)
struct BackgroundSoundTests {
    @Test("with the audio mode, playback goes on bit-exact in the background and the seed's lines are logged")
    func backgroundAudio() async throws {
        let server = try await PulseServer(name: "bg-audio")
        let recording = try await MonitorRecording(server: server)
        let manifest = try manifestFile(modes: ["audio"])
        let state = Subprocess.temporaryFile("sqlite")
        let names = ["join-1", "join-2", "join-3"]
        let socket = privateSocket("bg-audio")
        let daemon = try RunningDaemon(
            [
                "--server", server.address, "--exit-when-empty", "--manifest", manifest.path,
                "--background-log-interval", "0.1", "--state-file", state.path, "--socket", socket, "--pause",
            ] + names.map { Fixtures.mp3($0).path })
        // Paused until the states are followed, and the signal sent by the thread that reads them, 0.5 s into join-1:
        // sent from a test's task, it once came after the last item (the parallel tests had kept Swift's pool busy),
        // to a daemon already shutting down, which rightly ignores it.
        let states = try await DaemonStates(socket: socket)
        let pid = daemon.pid
        states.whenFirst({ $0.plays(past: 0.5) }, do: { kill(pid, SIGUSR1) })
        let played = await control(socket, "play")
        #expect(played.status == 0, "\(played.standardError)")
        // A miss shows the daemon's threads' signal masks if it still runs.
        let entered = await states.first { $0.application == "background" }
        #expect(entered != nil, "\(states.history)\n\(daemon.signalMasks())")
        // On a busy machine the signal may come after join-1: each item that starts in the background is named.
        let startedInBackground = names.drop { name in !(entered?.isOn(name) ?? false) }.dropFirst()
        let status = await daemon.exitStatus(within: 10)
        let samples = await recording.finish(afterFurther: 8_820)
        let log = daemon.log
        #expect(status == 0, "\(log)")

        let reference = try names.flatMap { try Fixtures.referenceInt16($0) }
        #expect(recordingDifference(samples, reference: reference) == nil, "the sound changed in the background")
        for line in [
            "entered the background", "App is backgrounded. Time is: ", "background task 'save state' (#1) began",
            "background task 'save state' (#1) ended after", "saved the state to \(state.path)",
        ] + startedInBackground.map({ "New music name: \($0).mp3" }) {
            #expect(log.contains(line), "the log lacks \(line): \(log)")
        }
        #expect(!log.contains("paused: entered the background"))
        let saved = await Subprocess.run(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("
                    + "'SELECT COUNT(*) FROM queueItem').fetchone()[0])", state.path,
            ])
        #expect(saved.standardOutput == "0\n", "the queue was played out and saved empty: \(saved.standardError)")
    }

    @Test("without the audio mode, the sound stops within 50 ms of backgrounding and stays off on return")
    func backgroundWithoutAudio() async throws {
        let server = try await PulseServer(name: "bg-pause")
        let recording = try await MonitorRecording(server: server)
        let missingManifest = "\(Scratch.uniquePath("no-manifest"))/Info.plist"
        let socket = privateSocket("bg-pause")
        let daemon = try RunningDaemon(
            [
                "--server", server.address, "--manifest", missingManifest, "--state-file",
                Subprocess.temporaryFile("sqlite").path, "--socket", socket, Fixtures.mp3("stereo-44k-5s").path,
            ])
        let states = try await DaemonStates(socket: socket)
        #expect(await states.first { $0.plays(past: 0.7) } != nil, "\(states.history)")
        let backgrounded = recording.framesSoFar
        daemon.send(SIGUSR1)
        let paused = await states.first { $0.status == "Paused" && $0.application != "active" }
        #expect(paused != nil, "\(states.history)")
        await recording.waitForFurther(22_050)
        daemon.send(SIGUSR2)
        #expect(await states.first { $0.application == "active" } != nil, "\(states.history)")
        await recording.waitForFurther(22_050)
        let end = recording.framesSoFar
        daemon.send(SIGTERM)
        let status = await daemon.exitStatus()
        let samples = recording.finish()
        let log = daemon.log
        #expect(status == 0, "\(log)")
        #expect(log.contains("no manifest at \(missingManifest)"))
        #expect(log.contains("suspended"), "\(log)")

        // The mark is the recording's length when the signal is sent. The sink renders its monitor in blocks, so
        // the sound may stop at the mark itself; any sound after it counts against the 50 ms.
        let frames = samples.count / 2
        let searchFrom = max(0, backgrounded - 44_100 / 2)
        let lastSound = stride(from: min(end, frames) - 1, through: searchFrom, by: -1).first { frame in
            samples[2 * frame] != 0 || samples[2 * frame + 1] != 0
        }
        let soundAfterSignal = max(0, (lastSound ?? 0) + 1 - backgrounded)
        #expect(lastSound != nil, "nothing was playing in the half second before the signal")
        #expect(soundAfterSignal <= 44_100 * 50 / 1000, "sound went on for \(soundAfterSignal) frames after SIGUSR1")
    }
}

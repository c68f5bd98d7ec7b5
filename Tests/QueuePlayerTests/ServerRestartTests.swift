import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// The offset, in frames, at which `part` (interleaved stereo) starts in `reference`, matching its first 512
/// frames exactly; nil when it is nowhere.
func offset(of part: [Int16], in reference: [Int16]) -> Int? {
    let probe = Array(part.prefix(1024))
    guard probe.count == 1024 else { return nil }
    return stride(from: 0, through: reference.count - probe.count, by: 2).first { start in
        reference[start] == probe[0] && Array(reference[start..<start + probe.count]) == probe
    }.map { $0 / 2 }
}

extension PulseServer.Kind {
    /// `names` without the stream failures PipeWire's server causes while its stack is still coming up, each with
    /// the restoration that follows it: it now and then fails a stream it has just accepted, before or after
    /// telling it ready (`pacat` met "Stream error: Input/Output error" in 1 start of 8), and the player opens
    /// another. Only after a first restoration; unchanged for PulseAudio, which never did this.
    func withoutStartUpStreamFailures(_ names: [String]) -> [String] {
        guard self == .pipeWire, let restored = names.firstIndex(of: "output restored") else { return names }
        var kept = Array(names[...restored])
        var rest = names[(restored + 1)...]
        while let first = rest.first {
            if first == "output failed streamFailed", rest.dropFirst().first == "output restored" {
                rest = rest.dropFirst(2)
            } else {
                kept.append(first)
                rest = rest.dropFirst()
            }
        }
        return kept
    }
}

/// Alone: it runs private PulseAudio and PipeWire servers, which load both cores; beside them, sample-exact edits on a
/// real-time null sink lost races they should not be exposed to, and PipeWire's graph dropped out.
@Suite(
    "A PulseAudio or PipeWire server that dies and comes back, recorded on both sides", .tier(.alone), .serialized,
    .timeLimit(.minutes(5)))
struct ServerRestartTests {
    @Test(
        "the server stops mid-item and restarts: the player waits, reconnects, and plays on from what was heard",
        arguments: PulseServer.Kind.allCases)
    func serverRestart(_ kind: PulseServer.Kind) async throws {
        let server = try await PulseServer(name: "restart", kind: kind)
        let before = try await MonitorRecording(server: server)
        let sink = try PulseAudioSink(server: server.address, logger: quietLogger, waitsForServer: true)
        let player = QueuePlayer(
            items: ["sweep-44k-4s", "join-1"].map { PlayerItem(url: Fixtures.mp3($0)) }, sink: sink,
            logger: quietLogger, application: Application())
        let events = player.playbackEvents()
        let (times, timesContinuation) = AsyncStream.makeStream(of: MediaTime.self)
        let observer = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 10), queue: .global())
        {
            timesContinuation.yield($0)
        }
        player.play()
        for await time in times where time >= MediaTime(value: 3, timescale: 2) { break }
        player.removeObserver(observer)
        // Stopped at a moment of the sink's clock, not right after a time was read: how much of what was written
        // had been heard must come from the stream's own timing, kept as fresh as the last write.
        await before.waitForFurther(13_230)
        await server.stop()
        let heardBeforeLoss = soundingFrames(before.finish())
        var seen: [PlaybackEvent] = []
        var after: MonitorRecording?
        for await event in events {
            seen.append(event)
            if case .outputFailed = event, after == nil {
                #expect(player.timeControlStatus == .waitingToPlayAtSpecifiedRate)
                try await server.restart()
                after = try await MonitorRecording(server: server)
            }
            if event == .queueFinished { break }
        }
        let afterRecording = try #require(after)
        let heardAfter = soundingFrames(afterRecording.finish())
        player.shutdown()

        #expect(
            kind.withoutStartUpStreamFailures(eventNames(seen)).filter { !$0.hasPrefix("start sweep") } == [
                "output failed serverDisconnected", "output restored", "end sweep-44k-4s", "start join-1",
                "end join-1", "queue end",
            ])
        let sweep = try Fixtures.referenceInt16("sweep-44k-4s")
        let heardFrom = kind.expectedRecording(of: sweep, heard: heardBeforeLoss)
        // Exact on both sides of the loss, but for the quanta PipeWire's graph may drop from each recording
        // (droppedQuanta): frames the listener heard that the monitor missed.
        let allowanceBefore = kind.droppedQuanta(during: before.machineLoad)
        let droppedBefore = droppedFrames(heardBeforeLoss, in: heardFrom, allowing: allowanceBefore)
        #expect(
            droppedBefore != nil,
            "\(glitchReport(heardBeforeLoss, in: heardFrom, allowing: allowanceBefore)); \(before.machineLoad.inWords)")
        let lostAt = (sweep.count - heardFrom.count + heardBeforeLoss.count) / 2 + (droppedBefore ?? 0)
        #expect(lostAt > 44_100, "the server was stopped after 1.5 s of the sweep")
        // Heard again after the restart: from where the sound stopped, to the end, then join-1. Nothing heard twice
        // by more than 50 ms. Resumed past the recording's end by at most 50 ms, on PipeWire 100 ms: the recording
        // goes through the server that is killed, and what it had not yet sent is lost with it (or the player counts
        // as heard what the graph never played; the test cannot tell which). Measured over 15 runs on an idle
        // machine, resumed minus stopped: PulseAudio −408 to −10 frames, its rewinding sink 500 to 1,355, PipeWire
        // 542 to 3,109 (2 of 15 over 2,205; 2,552 once in a loop of scripts/test).
        let resumedAt = try #require(offset(of: heardAfter, in: sweep), "the resumed sound is not the sweep")
        let skipAllowed = kind == .pipeWire ? 4_410 : 2_205
        #expect(
            (-2_205...skipAllowed).contains(resumedAt - lostAt), "stopped at frame \(lostAt), resumed at \(resumedAt)")
        let expectedAfter = soundingFrames(Array(sweep[(resumedAt * 2)...]) + (try Fixtures.referenceInt16("join-1")))
        let allowanceAfter = kind.droppedQuanta(during: afterRecording.machineLoad)
        let droppedAfter = droppedFrames(heardAfter, in: expectedAfter, allowing: allowanceAfter)
        let glitchesAfter = glitchReport(heardAfter, in: expectedAfter, allowing: allowanceAfter)
        let loadAfter = afterRecording.machineLoad.inWords
        #expect(
            droppedAfter.map { heardAfter.count + $0 * 2 == expectedAfter.count } == true,
            "\(heardAfter.count / 2) of \(expectedAfter.count / 2) frames: \(glitchesAfter); \(loadAfter)")
    }

    @Test(
        "a server restarted while the player is paused gets a stream opened corked: silence until play",
        arguments: PulseServer.Kind.allCases)
    func restartWhilePaused(_ kind: PulseServer.Kind) async throws {
        let server = try await PulseServer(name: "paused-restart", kind: kind)
        let sink = try PulseAudioSink(server: server.address, logger: quietLogger, waitsForServer: true)
        let engine = playing([Fixtures.mp3("stereo-44k-5s")], on: sink)
        var iterator = engine.events.makeAsyncIterator()
        while let name = await nextHeard(&iterator), name != "start stereo-44k-5s" {}
        engine.pause()
        await server.stop()
        while let name = await nextHeard(&iterator), !name.hasPrefix("output failed") {}
        try await server.restart()
        let recording = try await MonitorRecording(server: server)
        while let name = await nextHeard(&iterator), name != "output restored" {}
        #expect(await server.waitForSinkInput(matching: "44100Hz"), "no stream was opened after the restart")
        // The stream holds the item's frames from where it was heard; corked, it plays none of them.
        await recording.waitForFurther(13_230)
        let playedAt = recording.framesSoFar
        engine.play()
        let samples = await recording.finish(afterFurther: 8_820)
        engine.shutdown()
        let leaked = samples.prefix(playedAt * 2).filter { $0 != 0 }.count
        #expect(leaked == 0, "\(leaked) samples were heard while paused")
        #expect(samples.dropFirst(playedAt * 2).contains { $0 != 0 }, "nothing was heard after play")
    }

    /// PulseAudio only: PipeWire's server (0.3.65) keeps a stream whose sink went away, unlinked, without failing it.
    @Test(
        "a stream failed by its sink's unloading is retried with growing waits, and a later server stop is noticed",
        arguments: [PulseServer.Kind.pulseAudio])
    func streamFailedBySinkLoss(_ kind: PulseServer.Kind) async throws {
        let server = try await PulseServer(name: "sink-lost", kind: kind)
        let sink = try PulseAudioSink(server: server.address, logger: quietLogger, waitsForServer: true)
        let engine = playing([Fixtures.mp3("stereo-44k-5s")], on: sink)
        defer { engine.shutdown() }
        var iterator = engine.events.makeAsyncIterator()
        while let name = await nextHeard(&iterator), name != "start stereo-44k-5s" {}
        let modules = await server.pactl(["list", "short", "modules"]).standardOutput.split(separator: "\n")
        let nullSink = try #require(modules.first { $0.contains("module-null-sink") }?.split(separator: "\t").first)
        let unloadedAt = ContinuousClock.now
        #expect(await server.pactl(["unload-module", "\(nullSink)"]).status == 0)
        // With no sink, each stream opened fails at once: the waits before trying again after the second, third and
        // fourth failures (50, 100, 200 ms) put the fourth restoration at least 350 ms after the first failure.
        #expect(await nextHeard(&iterator) == "output failed streamFailed")
        var restorations = 0
        while restorations < 4, let name = await nextHeard(&iterator) {
            if name == "output restored" { restorations += 1 }
        }
        let fourthRestorationAfter = ContinuousClock.now - unloadedAt
        #expect(fourthRestorationAfter >= .milliseconds(350), "4 attempts in \(fourthRestorationAfter): a loop")
        let load = ["load-module", "module-null-sink", "sink_name=queueplayer", "rate=44100", "channels=2"]
        #expect(await server.pactl(load).status == 0)
        #expect(await server.pactl(["set-default-sink", "queueplayer"]).status == 0)
        #expect(await server.waitForSinkInput(matching: "44100Hz"), "no stream was opened once the sink was back")
        await server.stop()
        while let name = await nextHeard(&iterator), name != "output failed serverDisconnected" {}
        try await server.restart()
        while let name = await nextHeard(&iterator), name != "output restored" {}
        #expect(await nextHeard(&iterator) == "end stereo-44k-5s")
    }

    /// PulseAudio only: PipeWire's server (0.3.65) takes `pactl suspend-sink` on a sink in use without suspending
    /// it (the sink stays RUNNING and streams are not told), so there is nothing to wait for there. The player plays
    /// into a pipe sink, whose output is recorded: the null sink's monitor recording loses the fragment it was
    /// filling (10 ms) when the sink suspends, even under `pacat`, while the pipe sink's output holds every frame.
    @Test(
        "the server suspends the sink mid-item: the player waits where it stands, then plays on, every frame heard",
        arguments: [PulseServer.Kind.pulseAudio])
    func suspendedSink(_ kind: PulseServer.Kind) async throws {
        let server = try await PulseServer(name: "suspend", kind: kind)
        let recording = try await MonitorRecording(pipeSink: "piped", on: server)
        #expect(await server.pactl(["set-default-sink", "piped"]).status == 0)
        let player = QueuePlayer(
            items: [PlayerItem(url: Fixtures.mp3("sweep-44k-4s"))], sink: try pulseSink(server), logger: quietLogger,
            application: Application())
        let events = player.playbackEvents()
        player.play()
        var seen: [PlaybackEvent] = []
        for await event in events {
            seen.append(event)
            if case .itemStarted = event {
                await recording.waitForFurther(44_100)
                try await Self.suspend(server, true)
            }
            if event == .outputSuspended {
                #expect(player.timeControlStatus == .waitingToPlayAtSpecifiedRate)
                #expect(player.reasonForWaitingToPlay == .outputSuspended)
                let stood = player.currentTime()
                // The server's own word that the sink is suspended: a round trip in which a moving position shows.
                let sinks = await server.pactl(["list", "short", "sinks"])
                #expect(sinks.standardOutput.contains("SUSPENDED"), "\(sinks.standardOutput)")
                let later = player.currentTime()
                #expect(
                    abs((later - stood).seconds) < 0.005, "the position moved from \(stood.seconds) to \(later.seconds)"
                )
                try await Self.suspend(server, false)
            }
            if event == .outputResumed { #expect(player.timeControlStatus == .playing) }
            if event == .queueFinished { break }
        }
        let heard = soundingFrames(await recording.finish(afterFurther: 4_410))
        player.shutdown()
        #expect(eventNames(seen).filter { $0.hasPrefix("output") } == ["output suspended", "output resumed"])
        let sweep = try Fixtures.referenceInt16("sweep-44k-4s")
        #expect(sampleDifference(heard, sweep) == nil)
    }

    /// PulseAudio only: PipeWire's server (0.3.65) answers `pactl move-sink-input` at once but leaves the move to
    /// its session manager, which in 1 run of 5 here had not moved the stream 3 s later (nor ever, within the item).
    @Test(
        "the server moves the stream to another sink mid-item: it plays on there, nothing lost or repeated",
        arguments: [PulseServer.Kind.pulseAudio])
    func movedStream(_ kind: PulseServer.Kind) async throws {
        let server = try await PulseServer(name: "move", kind: kind)
        let loaded = await server.pactl([
            "load-module", "module-null-sink", "sink_name=other", "rate=44100", "channels=2", "format=s16le",
            "norewinds=1",
        ])
        try #require(loaded.status == 0, "pactl load-module: \(loaded.standardError)")
        let first = try await MonitorRecording(server: server)
        let second = try await MonitorRecording(server: server, monitor: "other.monitor")
        let player = QueuePlayer(
            items: [PlayerItem(url: Fixtures.mp3("sweep-44k-4s"))], sink: try pulseSink(server), logger: quietLogger,
            application: Application())
        let events = player.playbackEvents()
        player.play()
        var seen: [PlaybackEvent] = []
        for await event in events {
            seen.append(event)
            if case .itemStarted = event {
                await first.waitForFurther(44_100)
                // The player's stream, by its application name: PipeWire's server may list others.
                let inputs = await server.pactl(["list", "sink-inputs"])
                let ours = inputs.standardOutput.components(separatedBy: "Sink Input #").first {
                    $0.contains("application.name = \"QueuePlayer\"")
                }
                let index = try #require(ours?.prefix { $0.isNumber }.description, "\(inputs.standardOutput)")
                let moved = await server.pactl(["move-sink-input", index, "other"])
                try #require(moved.status == 0, "pactl move-sink-input: \(moved.standardError)")
                // The server's word that the stream is on the other sink.
                let sinks = await server.pactl(["list", "short", "sinks"])
                let other = try #require(
                    sinks.standardOutput.split(separator: "\n").first { $0.contains("\tother\t") }?
                        .prefix { $0.isNumber })
                #expect(await server.waitForSinkInput(matching: "\(index)\t\(other)\t", timeout: 3), "never moved")
                #expect(player.timeControlStatus == .playing)
            }
            if event == .queueFinished { break }
        }
        let tail = soundingFrames(await second.finish(afterFurther: 4_410))
        let head = soundingFrames(first.finish())
        player.shutdown()
        await server.stop()
        #expect(eventNames(seen).filter { $0.hasPrefix("output") } == [])
        let sweep = try Fixtures.referenceInt16("sweep-44k-4s")
        let heardFrames = (head.count + tail.count) / 2
        #expect(abs(heardFrames - sweep.count / 2) <= 441, "heard \(heardFrames) frames of \(sweep.count / 2)")
        #expect(head.count >= 44_100 * 2, "the first sink heard \(head.count / 2) frames before the move")
        #expect(sampleDifference(Array(head.prefix(44_100 * 2)), Array(sweep.prefix(44_100 * 2))) == nil)
        #expect(sampleDifference(Array(tail.suffix(44_100 * 2)), Array(sweep.suffix(44_100 * 2))) == nil)
    }

    /// Suspends (or resumes) the pipe sink `piped`, as `pactl suspend-sink` does for a device in use elsewhere.
    private static func suspend(_ server: PulseServer, _ suspended: Bool) async throws {
        let result = await server.pactl(["suspend-sink", "piped", suspended ? "1" : "0"])
        try #require(result.status == 0, "pactl suspend-sink: \(result.standardError)")
    }
}

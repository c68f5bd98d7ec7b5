import Foundation
import Synchronization
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// A recording `NullSink` whose "server" the test can take away and bring back, as a PulseAudio server dies and
/// restarts: while it is away, `start` and `reconnect` throw; taking it away stops the rendering and tells the
/// failure handler, as libpulse's state callback does.
final class InterruptibleSink: AudioSink {
    let inner: NullSink

    init(pacing: NullSink.Pacing) {
        inner = NullSink(pacing: pacing, recordingFrames: 1_000_000)
    }
    private let isAway = Mutex(false)
    private let failureHandler = Mutex<(@Sendable (AudioSinkError) -> Void)?>(nil)
    static let failure = AudioSinkError(.serverDisconnected, reason: "the test server went away", suggestion: "wait")

    var name: String { "interruptible \(inner.name)" }
    var outputSampleRate: Int? { inner.outputSampleRate }

    /// The server dies: nothing more is rendered, and the engine is told.
    func takeAway() {
        isAway.withLock { $0 = true }
        inner.stop()
        failureHandler.withLock { $0 }?(Self.failure)
    }

    /// The server answers again.
    func bringBack() {
        isAway.withLock { $0 = false }
    }

    func start(format: AudioFormat, renderer: Renderer, paused: Bool) throws(AudioSinkError) {
        if isAway.withLock({ $0 }) { throw Self.failure }
        try inner.start(format: format, renderer: renderer, paused: paused)
    }

    func reconnect() throws(AudioSinkError) {
        if isAway.withLock({ $0 }) { throw Self.failure }
    }

    func setPaused(_ paused: Bool) { inner.setPaused(paused) }
    func flush() { inner.flush() }
    var flushDropsUnplayedFrames: Bool { inner.flushDropsUnplayedFrames }
    func drain() throws(AudioSinkError) { try inner.drain() }
    func resumeAfterEndOfStream() { inner.resumeAfterEndOfStream() }
    func latencyFrames() -> Int { inner.latencyFrames() }
    func stop() { inner.stop() }
    func setFailureHandler(_ handler: @escaping @Sendable (AudioSinkError) -> Void) {
        failureHandler.withLock { $0 = handler }
    }
}

@Suite("The output goes away and comes back", .tier(.deterministic), .timeLimit(.minutes(1)))
struct OutputRecoveryTests {
    /// A player of fixtures on `sink`, its events subscribed, not playing yet.
    private func queued(_ names: [String], on sink: InterruptibleSink) -> (QueuePlayer, AsyncStream<PlaybackEvent>) {
        let player = QueuePlayer(
            items: names.map { PlayerItem(url: Fixtures.mp3($0)) }, sink: sink, logger: quietLogger,
            application: Application())
        return (player, player.playbackEvents())
    }

    @Test("playback resumes at the frame heard when the output went away: nothing heard twice, nothing skipped")
    func resumesWhereItStopped() async throws {
        // In real time, so that the output goes away mid-queue however loaded the machine is; the recording then
        // holds silence where the sink ran dry, which the comparison leaves out.
        let names = ["join-1", "join-2", "join-3"]
        // The output goes away from a time observer, not from this test's task, which a loaded machine may resume
        // only after the 1.5 s of join-2 were heard.
        let sink = InterruptibleSink(pacing: .realTime)
        let (player, events) = queued(names, on: sink)
        await play(player, inFileNamed: "join-2.mp3") { sink.takeAway() }
        var seen: [PlaybackEvent] = []
        for await event in events {
            seen.append(event)
            if case .outputFailed = event {
                #expect(player.timeControlStatus == .waitingToPlayAtSpecifiedRate)
                #expect(player.reasonForWaitingToPlay == .outputUnavailable(InterruptibleSink.failure))
                // Commands still work while the output is away.
                player.pause()
                player.play()
                sink.bringBack()
            }
            if case .outputRestored = event {
                // Read when this task runs, which on a loaded machine can be after the queue ended (no item to play):
                // what must be gone is the output's reason.
                #expect(player.reasonForWaitingToPlay != .outputUnavailable(InterruptibleSink.failure))
            }
            if event == .queueFinished { break }
        }
        player.shutdown()
        #expect(
            eventNames(seen) == [
                "start join-1", "end join-1", "start join-2", "output failed serverDisconnected", "output restored",
                "end join-2", "start join-3", "end join-3", "queue end",
            ])
        let reference = try names.flatMap { try Fixtures.referenceFloat($0) }
        #expect(sampleDifference(soundingFrames(sink.inner.takeRecording()), soundingFrames(reference)) == nil)
    }

    @Test("backgrounded without the audio mode while the output is away, the engine pauses: it stays paused on return")
    func backgroundWhileOutputAway() async throws {
        let sink = InterruptibleSink(pacing: .unpaced)
        sink.takeAway()
        let application = Application(
            manifest: AppManifest(backgroundModes: []), logger: quietLogger, terminate: { _ in })
        let engine = PlaybackEngine(sink: sink, logger: quietLogger)
        let policy = BackgroundPlaybackPolicy(player: engine, application: application)
        engine.enqueue([Fixtures.mp3("join-1")])
        var events = engine.events.makeAsyncIterator()
        engine.play()
        while let event = await events.next() {
            if case .outputFailed = event { break }
        }
        #expect(engine.isPlaybackRequested, "playback is wanted while the output is waited for")
        application.enterBackground()
        policy.waitUntilHandled()
        #expect(!engine.isPlaybackRequested)
        sink.bringBack()
        while let event = await events.next(), event != .outputRestored {}
        #expect(!engine.isPlaybackRequested, "the output came back, and playback stays paused in the background")
        engine.shutdown()
    }

    @Test("an output absent from the start is waited for; playback starts once it answers, from the beginning")
    func absentAtStart() async throws {
        let sink = InterruptibleSink(pacing: .unpaced)
        sink.takeAway()
        let (player, events) = queued(["join-1"], on: sink)
        player.play()
        var seen: [PlaybackEvent] = []
        for await event in events {
            seen.append(event)
            if case .outputFailed = event {
                #expect(player.rate == 1)
                #expect(player.timeControlStatus == .waitingToPlayAtSpecifiedRate)
                sink.bringBack()
            }
            if event == .queueFinished { break }
        }
        player.shutdown()
        #expect(
            eventNames(seen) == [
                "output failed serverDisconnected", "output restored", "start join-1", "end join-1", "queue end",
            ])
        #expect(sampleDifference(sink.inner.takeRecording(), try Fixtures.referenceFloat("join-1")) == nil)
    }
}

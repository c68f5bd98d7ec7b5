import Foundation
import Synchronization
import TestTiers
import Testing

@testable import QueuePlayer

/// The engine's state machine, driven without threads, sinks or sleeps: every command in every phase, checking the
/// phase it leads to and the actions it asks for. The table in HowPlaybackWorks.md lists the same transitions.
@Suite("The engine's state: every command in every phase", .tier(.deterministic))
struct EngineStateTests {
    typealias State = PlaybackEngine.State
    typealias Phase = PlaybackEngine.Phase

    /// The commands, each applied to a state and returning the kinds of actions it produced.
    enum Command: String, CaseIterable {
        case play, preroll, pause, enqueue, insert, remove, move, cue, seek, next, clear, holdOn, holdOff, shutDown,
            outputFailed
        case outputRestored, stall, bufferedEnough
        case volume, sameVolume, mute, sameMute
    }

    /// What an action is, without its payload, so that lists of actions can be compared.
    enum Kind: Equatable {
        case startThreads, resumeOutput, pauseOutput, wakeDecoder
        case failSeeks(Int)
        case finishSeeks(Int)
        case deactivateObservers(Int)
        case stopEverything, recoverOutput, reportTime, applyGain, closeLostOutput
        case post(String)
    }

    static func kinds(_ actions: [PlaybackEngine.Action]) -> [Kind] {
        actions.map { action in
            switch action {
            case .startThreads: .startThreads
            case .resumeOutput: .resumeOutput
            case .pauseOutput: .pauseOutput
            case .wakeDecoder: .wakeDecoder
            case .failSeeks(let completions): .failSeeks(completions.count)
            case .finishSeeks(let completions): .finishSeeks(completions.count)
            case .reportTime: .reportTime
            case .applyGain: .applyGain
            case .closeLostOutput: .closeLostOutput
            case .post(let event): .post("\(event)")
            case .deactivateObservers(let observers): .deactivateObservers(observers.count)
            case .stopEverything: .stopEverything
            case .recoverOutput: .recoverOutput
            }
        }.filter { $0 != .failSeeks(0) && $0 != .deactivateObservers(0) }
    }

    static let failure = AudioSinkError(
        .serverDisconnected, reason: "the server went away", suggestion: "start it again")

    static func apply(_ command: Command, to state: inout State) -> [Kind] {
        let path = "/music/a.mp3"
        switch command {
        case .play: return kinds(state.play())
        case .preroll: return kinds(state.preroll())
        case .pause: return kinds(state.pause())
        case .enqueue: return kinds(state.enqueue([path]).1)
        case .insert: return kinds(state.insert([path], after: state.order.first, audibleFrame: 0).1)
        case .remove: return kinds(state.order.last.map { state.remove($0, audibleFrame: 0) } ?? [])
        case .move: return kinds(state.order.last.map { state.move($0, to: 0, audibleFrame: 0).1 } ?? [])
        case .cue: return kinds(state.cue(startFrame: 100))
        case .seek: return kinds(state.seek(toFrame: 100, completion: { _ in }).1)
        case .next: return kinds(state.advanceToNextItem())
        case .clear: return kinds(state.removeAll())
        case .holdOn: return kinds(state.setHoldsAtItemEnd(true))
        case .holdOff: return kinds(state.setHoldsAtItemEnd(false))
        case .shutDown: return kinds(state.shutDown())
        case .outputFailed: return kinds(state.outputFailed(failure))
        case .outputRestored: return kinds(state.outputRestored())
        case .stall: return kinds(state.stall().actions)
        case .bufferedEnough: return kinds(state.bufferedEnough().actions)
        case .volume: return kinds(state.setVolume(0.5))
        case .sameVolume: return kinds(state.setVolume(state.volume))
        case .mute: return kinds(state.setMuted(true))
        case .sameMute: return kinds(state.setMuted(state.isMuted))
        }
    }

    /// A state with two entries queued, in `phase`.
    static func state(in phase: Phase) -> State {
        var state = State()
        _ = state.enqueue(["/music/1.mp3", "/music/2.mp3"])
        switch phase {
        case .idle: break
        case .playing: _ = state.play()
        case .paused: _ = (state.play(), state.pause())
        case .outputLost(_, let resumesPlaying, _):
            _ = (state.play(), state.outputFailed(failure))
            if !resumesPlaying { _ = state.pause() }
        case .buffering: _ = (state.play(), state.stall())
        case .shutDown: _ = state.shutDown()
        }
        #expect(state.phase == phase)
        return state
    }

    static let phases: [Phase] = [
        .idle, .playing, .paused, .outputLost(failure, resumesPlaying: true),
        .outputLost(failure, resumesPlaying: false), .buffering,
        .shutDown,
    ]

    /// The expected outcome of each command in each phase: the phase after, and the actions.
    static func expected(_ command: Command, in phase: Phase) -> (Phase, [Kind]) {
        let restart: [Kind] = phase.isFinal ? [] : [.wakeDecoder]
        switch command {
        case .play:
            switch phase {
            case .idle: return (.playing, [.startThreads])
            case .paused: return (.playing, [.resumeOutput, .wakeDecoder])
            case .outputLost: return (.outputLost(failure, resumesPlaying: true), [])
            default: return (phase, [])
            }
        case .preroll:
            return phase == .idle ? (.paused, [.startThreads]) : (phase, [])
        case .pause:
            switch phase {
            case .playing: return (.paused, [.pauseOutput])
            case .buffering: return (.paused, [])
            case .outputLost: return (.outputLost(failure, resumesPlaying: false), [])
            default: return (phase, [])
            }
        case .enqueue, .insert, .remove, .move, .cue, .next, .clear:
            return (phase, restart)
        case .seek:
            return (phase, phase.isFinal ? [.failSeeks(1)] : [.wakeDecoder])
        case .holdOn, .holdOff:
            return (phase, [.wakeDecoder])
        case .shutDown:
            return (.shutDown, phase == .shutDown ? [] : [.stopEverything])
        case .outputFailed:
            switch phase {
            case .idle, .paused: return (.outputLost(failure, resumesPlaying: false), [.recoverOutput])
            case .playing, .buffering: return (.outputLost(failure, resumesPlaying: true), [.recoverOutput])
            case .outputLost, .shutDown: return (phase, [])
            }
        case .outputRestored:
            switch phase {
            case .outputLost(_, let resumesPlaying, _):
                return (resumesPlaying ? .playing : .paused, [.wakeDecoder, .post("outputRestored")])
            default: return (phase, [])
            }
        case .stall:
            return phase == .playing ? (.buffering, [.pauseOutput]) : (phase, [])
        case .bufferedEnough:
            return phase == .buffering ? (.playing, [.resumeOutput]) : (phase, [])
        case .volume, .mute:
            return (phase, [.applyGain])
        case .sameVolume, .sameMute:
            return (phase, [])
        }
    }

    /// A forward buffer of 1,000 bytes a second holding `unread` bytes, `isFinal` when nothing more will come.
    static func forwardBuffer(unread: Int, isFinal: Bool = false) -> ForwardBuffer {
        let buffer = ForwardBuffer(capacity: 100_000)
        buffer.setByteRate(1000, audioStart: 0)
        buffer.record(ForwardBuffer.Reading(held: 0..<unread, unread: unread, isFinal: isFinal))
        return buffer
    }

    @Test("play waits for a remote item's forward buffer, unless waiting to minimize stalls is off")
    func playWaitsForTheForwardBuffer() {
        var state = State()
        _ = state.enqueue(["http://radio.test/live.mp3"])
        #expect(Self.kinds(state.play()) == [.startThreads])
        #expect(state.phase == .buffering, "nothing of a remote first item has arrived before the first play")
        var local = State()
        _ = local.enqueue(["/music/1.mp3"])
        _ = local.play()
        #expect(local.phase == .playing)
        var eager = State()
        eager.waitsToMinimizeStalls = false
        _ = eager.enqueue(["http://radio.test/live.mp3"])
        _ = eager.play()
        #expect(eager.phase == .playing)

        var paused = Self.state(in: .paused)
        paused.decodingBuffer = Self.forwardBuffer(unread: 1500)
        #expect(Self.kinds(paused.play()) == [.wakeDecoder])
        #expect(paused.phase == .buffering, "1.5 s held, 2 s wanted")
        _ = paused.pause()
        paused.decodingBuffer = Self.forwardBuffer(unread: 2000)
        #expect(Self.kinds(paused.play()) == [.resumeOutput, .wakeDecoder])
        #expect(paused.phase == .playing)
        _ = paused.pause()
        paused.decodingBuffer = Self.forwardBuffer(unread: 10, isFinal: true)
        _ = paused.play()
        #expect(paused.phase == .playing, "the item's last byte is there: nothing more to wait for")
    }

    @Test("a forward buffer's flags follow what it holds and its target, and are told when they change")
    func forwardBufferFlags() {
        let buffer = Self.forwardBuffer(unread: 0)
        let told = Mutex(0)
        buffer.onChange { told.withLock { $0 += 1 } }
        #expect(buffer.flags == ForwardBuffer.Flags(isLikelyToKeepUp: false, isEmpty: true, isFull: false))
        buffer.record(ForwardBuffer.Reading(held: 0..<1000, unread: 1000))
        #expect(buffer.flags == ForwardBuffer.Flags(isLikelyToKeepUp: false, isEmpty: false, isFull: false))
        buffer.setTarget(seconds: 0.5)
        #expect(buffer.flags.isLikelyToKeepUp)
        buffer.record(ForwardBuffer.Reading(held: 0..<1000, unread: 1000))
        #expect(told.withLock { $0 } == 2, "told at each change of a flag, not at each reading")
        buffer.record(ForwardBuffer.Reading(held: 500..<3000, unread: 2000, isFull: true))
        #expect(buffer.flags.isFull && buffer.loadedSeconds == 0.5..<3.0)
    }

    @Test("every command is defined in every phase", arguments: Command.allCases)
    func everyCommandInEveryPhase(_ command: Command) {
        for phase in Self.phases {
            var state = Self.state(in: phase)
            let actions = Self.apply(command, to: &state)
            let (phaseAfter, expectedActions) = Self.expected(command, in: phase)
            #expect(state.phase == phaseAfter, "\(command) in \(phase)")
            #expect(actions == expectedActions, "\(command) in \(phase)")
        }
    }

    @Test("a pause that finds playback not wanted reports no time, in every phase: it is no event")
    func pauseWhenPausedReportsNothing() {
        for phase in Self.phases {
            var state = Self.state(in: phase)
            let wasWanted = state.isPlaybackRequested
            var actions: [PlaybackEngine.Action] = []
            state.pausePlayer(into: &actions)
            #expect(Self.kinds(actions).contains(.reportTime) == wasWanted, "pause in \(phase)")
            var again: [PlaybackEngine.Action] = []
            state.pausePlayer(into: &again)
            #expect(again.isEmpty, "a second pause in \(phase)")
        }
    }

    @Test("a seek replaced by another command is told false; shutting down tells the last one false")
    func replacedSeeksAreFailed() {
        var state = Self.state(in: .playing)
        _ = state.seek(toFrame: 10, completion: { _ in })
        #expect(Self.kinds(state.seek(toFrame: 20, completion: { _ in }).1) == [.failSeeks(1), .wakeDecoder])
        #expect(Self.kinds(state.advanceToNextItem()) == [.failSeeks(1), .wakeDecoder])
        _ = state.seek(toFrame: 30, completion: { _ in })
        #expect(Self.kinds(state.shutDown()) == [.failSeeks(1), .stopEverything])
        #expect(state.waitingRestart?.completions.isEmpty ?? true)
    }

    /// What the decoding thread finds opened in `entry`: one second at 1 kHz, stereo.
    static func info(_ entry: QueueEntry) -> OpenedEntry {
        let format = AudioFormat(sampleRate: 1000, channelCount: 2)
        return OpenedEntry(entry: entry, format: format, frameCount: 1000, metadata: .init())
    }

    /// The entry a decoder step opens, or nil for any other step.
    static func opened(_ step: PlaybackEngine.DecoderStep) -> (QueueEntry, PlaybackEngine.Restart?)? {
        if case .open(let entry, let led) = step { return (entry, led) }
        return nil
    }

    /// Counts how many times its completions are told true and false.
    final class SeekOutcomes: Sendable {
        let told = Mutex<[Bool]>([])
        var completion: @Sendable (Bool) -> Void { { [self] outcome in told.withLock { $0.append(outcome) } } }
    }

    @Test("the decoding thread walks the queue: opening, decoding, a failure alone, then idle and the queue done")
    func decodingThreadWalksTheQueue() throws {
        var state = Self.state(in: .playing)
        #expect(state.activity.name == "not started")
        let (first, led) = try #require(Self.opened(state.nextDecoderStep()))
        #expect(led == nil && state.activity.name == "opening")
        #expect(state.order.map(\.id) == [1, 2], "the entry being opened stays in the order")
        let seeks = state.opened(Self.info(first), atFrame: 0, resumingAt: 0)
        #expect(seeks.isEmpty)
        #expect(state.activity.name == "decoding" && state.timeline.playing?.entry == first)
        let holds = state.finishedItem(atFrame: 1000, failure: nil)
        #expect(!holds)
        let (second, _) = try #require(Self.opened(state.nextDecoderStep()))
        let unreadable = DecoderError(.unreadable, url: second.url, reason: "cannot be read", suggestion: "check it")
        _ = state.openingFailed(unreadable, atFrame: 1000)
        #expect(state.activity.name == "between items" && state.order.map(\.id) == [1, 2])
        guard case .finishWriting = state.nextDecoderStep() else {
            Issue.record("nothing left to open")
            return
        }
        let settled = state.settleIdle()
        #expect(settled.isIdle && state.activity.name == "idle")
        #expect(!state.queueIsDone, "not before the items were heard")
        let heard = state.dueDeliveries(audibleFrame: 1000)
        #expect(heard.count == 3, "started, finished, failed: \(heard)")
        #expect(state.queueIsDone)
        let (reported, reportedAgain) = (state.takeQueueFinished(), state.takeQueueFinished())
        #expect(reported && !reportedAgain)
        _ = state.enqueue(["/music/3.mp3"])
        #expect(!state.queueIsDone)
    }

    @Test("the end of the queue is reported once: a hold toggle, a cue or a lost output keep it; emptying clears it")
    func queueEndIsReportedOnce() {
        var state = Self.state(in: .playing)
        _ = state.removeAll()
        /// The decoding thread carries out what waits and settles idle; true when the event thread then reports an
        /// end.
        func settleAndReport(_ state: inout State) -> Bool {
            while true {
                switch state.nextDecoderStep() {
                case .finishWriting:
                    #expect(state.settleIdle().isIdle)
                    return state.queueIsDone && state.takeQueueFinished()
                case .cut(let frame, let number):
                    state.cutDecodedAhead(atRingFrame: frame, restartNumber: number, done: false)
                case .restart, .open, .waitForOutput:
                    continue
                }
            }
        }
        #expect(settleAndReport(&state), "the emptied queue is done")
        #expect(state.activity.name == "idle, end reported")
        _ = state.setHoldsAtItemEnd(true)
        #expect(!settleAndReport(&state), "a hold toggle wakes the thread but changes nothing queued")
        _ = state.cue(startFrame: 100)
        #expect(!settleAndReport(&state), "a cue on an empty queue changes nothing queued")
        _ = state.outputFailed(Self.failure)
        _ = state.takeUpOutputLoss(audibleFrame: 0)
        _ = state.outputRestored()
        #expect(!settleAndReport(&state), "a recovered output changes nothing queued")
        _ = state.cue(startFrame: 100)
        _ = state.removeAll()
        #expect(settleAndReport(&state), "emptying the queue again is a new end, also after a cue that waits")
    }

    @Test("a seek leads the next opening: its frame, no second start, its completion told once opened")
    func seekLeadsTheNextOpening() throws {
        var state = Self.state(in: .playing)
        let (first, _) = try #require(Self.opened(state.nextDecoderStep()))
        _ = state.opened(Self.info(first), atFrame: 0, resumingAt: 0)
        let outcomes = SeekOutcomes()
        _ = state.seek(toFrame: 400, completion: outcomes.completion)
        guard case .restart(let replaced, reopensOutput: false, continuing: nil, _) = state.nextDecoderStep() else {
            Issue.record("the seek is taken up first")
            return
        }
        #expect(replaced.isEmpty && state.activity.name == "restarting" && state.timeline.isEmpty)
        let (again, led) = try #require(Self.opened(state.nextDecoderStep()))
        #expect(again == first && led?.startFrame == 400 && led?.resumes == first)
        state.opened(Self.info(again), atFrame: -400, resumingAt: 400).forEach { $0(true) }
        #expect(outcomes.told.withLock { $0 } == [true])
        #expect(state.timeline.playing?.resumeFrame == 400)
    }

    /// A playing state whose first entry was decoded to ring frame 1000 and whose second is being decoded after it.
    static func twoDecoded() throws -> (State, first: QueueEntry, second: QueueEntry) {
        var state = Self.state(in: .playing)
        let (first, _) = try #require(Self.opened(state.nextDecoderStep()))
        _ = state.opened(Self.info(first), atFrame: 0, resumingAt: 0)
        _ = state.finishedItem(atFrame: 1000, failure: nil)
        let (second, _) = try #require(Self.opened(state.nextDecoderStep()))
        _ = state.opened(Self.info(second), atFrame: 1000, resumingAt: 0)
        return (state, first, second)
    }

    @Test("an insert into audio decoded ahead first cuts what follows the playing item; done, the new entry is next")
    func insertBetweenDecodedItemsCutsAtTheItemEnd() throws {
        var (state, first, second) = try Self.twoDecoded()
        let (inserted, _) = state.insert(["/music/between.mp3"], after: first, audibleFrame: 300)
        guard case .cut(atRingFrame: 1000, let number) = state.nextDecoderStep() else {
            Issue.record("the edit cuts at the playing item's end")
            return
        }
        state.cutDecodedAhead(atRingFrame: 1000, restartNumber: number, done: true)
        #expect(state.timeline.entries == [first])
        #expect(state.restartsAreCarriedOut)
        let (next, led) = try #require(Self.opened(state.nextDecoderStep()))
        #expect(next == inserted.first && led == nil)
        #expect(state.pending == [second])
    }

    @Test("an insert into audio decoded ahead that cannot be cut resumes the playing item where it is heard")
    func insertBetweenDecodedItemsContinuesTheHeardFrame() throws {
        var (state, first, _) = try Self.twoDecoded()
        _ = state.insert(["/music/between.mp3"], after: first, audibleFrame: 300)
        guard case .cut(atRingFrame: 1000, let number) = state.nextDecoderStep() else {
            Issue.record("the edit tries a cut first")
            return
        }
        state.cutDecodedAhead(atRingFrame: 1000, restartNumber: number, done: false)
        guard case .restart(_, reopensOutput: false, let continuing, _) = state.nextDecoderStep() else {
            Issue.record("the edit restarts decoding")
            return
        }
        #expect(continuing == 300)
        let (again, led) = try #require(Self.opened(state.nextDecoderStep()))
        #expect(again == first && led?.startFrame == 300 && led?.keepsObservers == true)
    }

    @Test("a restart taken and replaced before it was carried out has its seeks told false")
    func replacedRestartFailsItsSeeks() {
        var state = Self.state(in: .playing)
        let outcomes = SeekOutcomes()
        _ = state.seek(toFrame: 10, completion: outcomes.completion)
        _ = state.nextDecoderStep()
        _ = state.seek(toFrame: 20, completion: outcomes.completion)
        guard case .restart(let replaced, _, _, _) = state.nextDecoderStep() else {
            Issue.record("the second seek is taken up")
            return
        }
        replaced.forEach { $0(false) }
        #expect(outcomes.told.withLock { $0 } == [false])
    }

    @Test("holding at an item's end: next after the item was heard releases the hold instead of skipping")
    func nextReleasesAHold() throws {
        var state = Self.state(in: .playing)
        _ = state.setHoldsAtItemEnd(true)
        let (first, _) = try #require(Self.opened(state.nextDecoderStep()))
        _ = state.opened(Self.info(first), atFrame: 0, resumingAt: 0)
        let holds = state.finishedItem(atFrame: 1000, failure: nil)
        #expect(holds)
        #expect(state.keepsHolding && state.activity.name == "holding at item end")
        _ = state.dueDeliveries(audibleFrame: 1000)
        #expect(Self.kinds(state.advanceToNextItem()) == [.wakeDecoder])
        #expect(!state.keepsHolding && state.waitingRestart == nil && state.order.map(\.id) == [2])
        state.leaveHold()
        #expect(state.activity.name == "between items")
    }

    @Test("turning the hold off, or a restart, releases it; shutting down does too")
    func holdReleases() throws {
        for release in ["hold off", "seek", "shut down"] {
            var state = Self.state(in: .playing)
            _ = state.setHoldsAtItemEnd(true)
            let (first, _) = try #require(Self.opened(state.nextDecoderStep()))
            _ = state.opened(Self.info(first), atFrame: 0, resumingAt: 0)
            _ = state.finishedItem(atFrame: 1000, failure: nil)
            switch release {
            case "hold off": _ = state.setHoldsAtItemEnd(false)
            case "seek": _ = state.seek(toFrame: 0, completion: nil)
            default: _ = state.shutDown()
            }
            #expect(!state.keepsHolding, "\(release)")
        }
    }

    @Test("the output lost while a seek is being carried out: the seek is kept, and carried out once it is back")
    func outputLostDuringASeek() throws {
        for moment in ["restarting", "opening"] {
            var state = Self.state(in: .playing)
            let outcomes = SeekOutcomes()
            _ = state.seek(toFrame: 300, completion: outcomes.completion)
            _ = state.nextDecoderStep()
            if moment == "opening" { _ = state.nextDecoderStep() }
            _ = state.outputFailed(Self.failure)
            #expect(state.waitingRestart?.startFrame == 300, "\(moment)")
            state.abandonOpening().forEach { $0(false) }
            guard case .waitForOutput = state.nextDecoderStep() else {
                Issue.record("\(moment): waits for the output")
                continue
            }
            _ = state.outputRestored()
            guard case .restart(let replaced, reopensOutput: true, continuing: nil, _) = state.nextDecoderStep() else {
                Issue.record("\(moment): the kept seek is taken up with a new stream")
                continue
            }
            #expect(replaced.isEmpty)
            let (entry, led) = try #require(Self.opened(state.nextDecoderStep()))
            #expect(entry.id == 1 && led?.startFrame == 300, "\(moment)")
            state.opened(Self.info(entry), atFrame: -300, resumingAt: 300).forEach { $0(true) }
            #expect(outcomes.told.withLock { $0 } == [true], "\(moment): told once, when carried out")
        }
    }

    @Test("a seek while the output is lost replaces the kept restart and still opens a new stream; later ones do not")
    func seekWhileOutputLost() throws {
        var state = Self.state(in: .playing)
        let (first, _) = try #require(Self.opened(state.nextDecoderStep()))
        _ = state.opened(Self.info(first), atFrame: 0, resumingAt: 0)
        _ = state.outputFailed(Self.failure)
        let taken = state.takeUpOutputLoss(audibleFrame: 100)
        let loss = try #require(taken)
        #expect(Self.kinds(loss.actions) == [.closeLostOutput, .post("\(PlaybackEvent.outputFailed(Self.failure))")])
        let secondTakeUp = state.takeUpOutputLoss(audibleFrame: 200)
        #expect(secondTakeUp == nil, "a loss is taken up once")
        guard case .waitForOutput = state.nextDecoderStep() else {
            Issue.record("waits for the output")
            return
        }
        _ = state.seek(toFrame: 500, completion: nil)
        _ = state.outputRestored()
        guard case .restart(_, reopensOutput: true, continuing: nil, _) = state.nextDecoderStep() else {
            Issue.record("the seek that replaced the kept restart is taken up with a new stream")
            return
        }
        let (again, led) = try #require(Self.opened(state.nextDecoderStep()))
        #expect(led?.startFrame == 500)
        _ = state.opened(Self.info(again), atFrame: -500, resumingAt: 500)
        _ = state.seek(toFrame: 700, completion: nil)
        guard case .restart(_, reopensOutput: false, _, _) = state.nextDecoderStep() else {
            Issue.record("a seek once the stream is open again keeps it")
            return
        }
    }

    @Test("the decoding thread's state while the output is lost: it waits, and goes idle only once it is back")
    func idleWaitsForTheOutput() {
        var state = Self.state(in: .playing)
        _ = state.removeAll()
        _ = state.outputFailed(Self.failure)
        guard case .waitForOutput = state.nextDecoderStep() else {
            Issue.record("waits")
            return
        }
        let whileLost = state.settleIdle()
        #expect(!whileLost.isIdle)
        _ = state.outputRestored()
        _ = state.nextDecoderStep()
        guard case .finishWriting = state.nextDecoderStep() else {
            Issue.record("nothing to open")
            return
        }
        let onceBack = state.settleIdle()
        #expect(onceBack.isIdle)
    }

    @Test("an item resumed inside is where it resumed until its first frame written is heard, never before it")
    func resumedItemTime() {
        var state = State()
        let entry = state.enqueue(["/music/1.mp3"]).0[0]
        // Resumed at item frame 600, written from ring frame 5,000: the item's frame 0 falls on ring frame 4,400.
        state.timeline.begin(Self.info(entry), atFrame: 4_400, resumingAt: 600, announcesStart: false)
        #expect(state.status(audibleFrame: 4_700).elapsedFrames == 600, "older frames heard, or a flush not taken up")
        #expect(state.status(audibleFrame: 5_000).elapsedFrames == 600)
        #expect(state.status(audibleFrame: 5_250).elapsedFrames == 850)
        #expect(state.status(audibleFrame: 9_000).elapsedFrames == 1_000, "at most the item's length")
    }
}

import Foundation
import Testing

@testable import QueuePlayer

/// The engine's state machine, driven without threads, sinks or sleeps: every command in every phase, checking the
/// phase it leads to and the actions it asks for. The table in HowPlaybackWorks.md lists the same transitions.
@Suite("The engine's state: every command in every phase")
struct EngineStateTests {
    typealias State = PlaybackEngine.State
    typealias Phase = PlaybackEngine.Phase

    /// The commands, each applied to a state and returning the kinds of actions it produced.
    enum Command: String, CaseIterable {
        case play, pause, enqueue, cue, seek, next, clear, holdOn, holdOff, shutDown, outputFailed, outputRestored
    }

    /// What an action is, without its payload, so that lists of actions can be compared.
    enum Kind: Equatable {
        case startThreads, resumeOutput, pauseOutput, wakeDecoder, failSeeks(Int), stopEverything, recoverOutput
    }

    static func kinds(_ actions: [PlaybackEngine.Action]) -> [Kind] {
        actions.map { action in
            switch action {
            case .startThreads: .startThreads
            case .resumeOutput: .resumeOutput
            case .pauseOutput: .pauseOutput
            case .wakeDecoder: .wakeDecoder
            case .failSeeks(let completions): .failSeeks(completions.count)
            case .stopEverything: .stopEverything
            case .recoverOutput: .recoverOutput
            }
        }.filter { $0 != .failSeeks(0) }
    }

    static let failure = AudioSinkError(
        .serverDisconnected, reason: "the server went away", suggestion: "start it again")

    static func apply(_ command: Command, to state: inout State) -> [Kind] {
        let url = URL(fileURLWithPath: "/music/a.mp3")
        switch command {
        case .play: return kinds(state.play())
        case .pause: return kinds(state.pause())
        case .enqueue: return kinds(state.enqueue([url]).1)
        case .cue: return kinds(state.cue(startFrame: 100))
        case .seek: return kinds(state.seek(toFrame: 100, completion: { _ in }).1)
        case .next: return kinds(state.advanceToNextItem())
        case .clear: return kinds(state.removeAll())
        case .holdOn: return kinds(state.setHoldsAtItemEnd(true))
        case .holdOff: return kinds(state.setHoldsAtItemEnd(false))
        case .shutDown: return kinds(state.shutDown())
        case .outputFailed: return kinds(state.outputFailed(failure))
        case .outputRestored: return kinds(state.outputRestored())
        }
    }

    /// A state with two entries queued, in `phase`.
    static func state(in phase: Phase) -> State {
        var state = State()
        _ = state.enqueue([URL(fileURLWithPath: "/music/1.mp3"), URL(fileURLWithPath: "/music/2.mp3")])
        switch phase {
        case .idle: break
        case .playing: _ = state.play()
        case .paused: _ = (state.play(), state.pause())
        case .outputLost(_, let resumesPlaying):
            _ = (state.play(), state.outputFailed(failure))
            if !resumesPlaying { _ = state.pause() }
        case .shutDown: _ = state.shutDown()
        }
        #expect(state.phase == phase)
        return state
    }

    static let phases: [Phase] = [
        .idle, .playing, .paused, .outputLost(failure, resumesPlaying: true), .outputLost(failure, resumesPlaying: false),
        .shutDown,
    ]

    /// The expected outcome of each command in each phase: the phase after, and the actions.
    static func expected(_ command: Command, in phase: Phase) -> (Phase, [Kind]) {
        let restart: [Kind] = phase.isFinal ? [] : [.wakeDecoder]
        switch command {
        case .play:
            switch phase {
            case .idle: return (.playing, [.startThreads])
            case .paused: return (.playing, [.resumeOutput])
            case .outputLost: return (.outputLost(failure, resumesPlaying: true), [])
            default: return (phase, [])
            }
        case .pause:
            switch phase {
            case .playing: return (.paused, [.pauseOutput])
            case .outputLost: return (.outputLost(failure, resumesPlaying: false), [])
            default: return (phase, [])
            }
        case .enqueue, .cue, .next, .clear:
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
            case .playing: return (.outputLost(failure, resumesPlaying: true), [.recoverOutput])
            case .outputLost, .shutDown: return (phase, [])
            }
        case .outputRestored:
            switch phase {
            case .outputLost(_, let resumesPlaying): return (resumesPlaying ? .playing : .paused, [.wakeDecoder])
            default: return (phase, [])
            }
        }
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

    @Test("a seek replaced by another command is told false; shutting down tells the last one false")
    func replacedSeeksAreFailed() {
        var state = Self.state(in: .playing)
        _ = state.seek(toFrame: 10, completion: { _ in })
        #expect(Self.kinds(state.seek(toFrame: 20, completion: { _ in }).1) == [.failSeeks(1), .wakeDecoder])
        #expect(Self.kinds(state.advanceToNextItem()) == [.failSeeks(1), .wakeDecoder])
        _ = state.seek(toFrame: 30, completion: { _ in })
        #expect(Self.kinds(state.shutDown()) == [.failSeeks(1), .stopEverything])
        #expect(state.restart?.completions.isEmpty ?? true)
    }

    @Test("the activity follows the decoding thread: restarting, then decoding, holding or empty")
    func activity() {
        var state = Self.state(in: .idle)
        #expect(state.activity == .decoding)
        _ = state.cue(startFrame: 5)
        #expect(state.activity == .restarting)
        #expect(state.order.map(\.url.lastPathComponent) == ["1.mp3", "2.mp3"])
        _ = state.advanceToNextItem()
        #expect(state.order.map(\.url.lastPathComponent) == ["2.mp3"])
        #expect(state.restart?.startFrame == 0)
        state.restart = nil
        state.isHoldingAtItemEnd = true
        #expect(state.activity == .holdingAtItemEnd)
        state.isHoldingAtItemEnd = false
        _ = state.removeAll()
        state.restart = nil
        #expect(state.activity == .empty)
    }

    @Test("next while held at an item's end that was heard releases the hold instead of skipping")
    func nextReleasesAHold() {
        var state = Self.state(in: .playing)
        _ = state.setHoldsAtItemEnd(true)
        state.isHoldingAtItemEnd = true
        #expect(Self.kinds(state.advanceToNextItem()) == [.wakeDecoder])
        #expect(state.holdReleased)
        #expect(state.restart == nil)
        #expect(state.order.count == 2)
    }
}

import Dispatch
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import Synchronization
import TestSupport
import TestTiers
import Testing

/// Two front ends' commands interleaved at each point where one could come between the parts of the other, by
/// holding the first there: the result, what subscribers were told last and what the store holds are those of the
/// two commands carried out one after the other, in the order their turns came. No timing is involved.
@Suite("Commands from two front ends, interleaved at every point", .tier(.deterministic), .timeLimit(.minutes(1)))
struct CommandInterleavingTests {
    /// Two commands, and what the player shows after both, given which of them had its turn first.
    struct Scenario: Sendable, CustomTestStringConvertible {
        var name: String
        var first: ControlCommand
        var second: ControlCommand
        /// The snapshot after the two, the first command's turn having come first (`true`) or second.
        var expect: @Sendable (PlayerSnapshot, _ firstWentFirst: Bool) -> Bool
        var testDescription: String { name }
    }

    static let scenarios = [
        Scenario(name: "play-pause and play-pause", first: .playPause, second: .playPause) { after, _ in
            after.status == .paused
        },
        Scenario(name: "play-pause and pause", first: .playPause, second: .pause) { after, firstWentFirst in
            after.status == (firstWentFirst ? .paused : .playing)
        },
        Scenario(
            name: "relative volume twice", first: .volume(0.125, relative: true), second: .volume(0.25, relative: true)
        ) { after, _ in after.volume == 0.875 },
        Scenario(
            name: "relative seek twice", first: .position(0.5, relative: true), second: .position(1, relative: true)
        ) { after, _ in abs(after.position - 1.5) < 0.001 },
        Scenario(
            name: "open and open", first: .open(Fixtures.mp3("join-2").path), second: .open(Fixtures.mp3("join-3").path)
        ) { after, firstWentFirst in
            let playedLast = firstWentFirst ? "join-3.mp3" : "join-2.mp3"
            return after.status == .playing && after.current?.url.lastPathComponent == playedLast
        },
    ]

    @Test(
        "the second command comes while the first waits for its turn, or while the first has it",
        arguments: scenarios, [CommandPath.Point.waiting, .carriedOut])
    func interleaved(_ scenario: Scenario, heldAt point: CommandPath.Point) async throws {
        let points = HeldPoints(holding: point)
        let path = CommandPath(observer: points.reached)
        // Audio time moves only as the test renders, and it renders nothing: the position moves by seeks alone.
        let service = try ServiceHarness(sink: SteppedSink(), commandPath: path)
        service.add("stereo-44k-5s")
        service.run(.volume(0.5, relative: false))
        let changes = service.controller.changes()
        var told = changes.makeAsyncIterator()
        _ = await told.next()

        points.arm()
        let first = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            #expect(service.run(scenario.first).ok == true)
            first.signal()
        }
        try #require(points.held.wait(timeout: .now() + 10) == .success, "the first command never reached \(point)")
        let firstWentFirst: Bool
        switch point {
        case .waiting:
            // The first asked for the turn and is held before it gets it: the second takes the turn first.
            #expect(service.run(scenario.second).ok == true)
            firstWentFirst = false
        case .carriedOut:
            // The first has the turn: the second must wait for it, and is not carried out meanwhile.
            let second = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                #expect(service.run(scenario.second).ok == true)
                second.signal()
            }
            try #require(points.waiting.wait(timeout: .now() + 10) == .success, "the second never asked for a turn")
            #expect(points.carriedOut == 1, "the second was carried out while the first had the turn")
            points.release()
            try #require(second.wait(timeout: .now() + 10) == .success)
            firstWentFirst = true
        }
        points.release()
        try #require(first.wait(timeout: .now() + 10) == .success)

        let after = service.status
        #expect(scenario.expect(after, firstWentFirst), "\(after)")
        #expect(points.carriedOut == 2)
        let saved = try service.store.load()
        #expect(saved.volume == Float(after.volume))
        #expect(saved.wasPlaying == (after.status == .playing))
        #expect(abs(saved.positionSeconds - after.position) < 0.001)
        // Subscribers were told the end state last: a snapshot told out of turn would come after it. A change of
        // volume marks the end of what the two commands told.
        service.run(.volume(0.0625, relative: false))
        var lastTold: PlayerSnapshot?
        while let next = await told.next(), next.volume != 0.0625 { lastTold = next }
        #expect(lastTold == after)
    }
}

/// Holds the first command that reaches a point until released, and tells the test which points were reached.
private final class HeldPoints: Sendable {
    let point: CommandPath.Point
    /// Signalled when a command is held at `point`.
    let held = DispatchSemaphore(value: 0)
    /// Signalled when a command asks for the turn while one is held.
    let waiting = DispatchSemaphore(value: 0)
    private let releasing = DispatchSemaphore(value: 0)
    private let state = Mutex((armed: false, holding: false, carriedOut: 0, counting: false))

    init(holding point: CommandPath.Point) { self.point = point }

    /// Commands carried out so far (counted from ``arm()``).
    var carriedOut: Int { state.withLock { $0.carriedOut } }

    /// Holds the next command that reaches the point.
    func arm() { state.withLock { $0 = (armed: true, holding: false, carriedOut: 0, counting: true) } }

    /// Lets the held command go on.
    func release() {
        guard state.withLock({ $0.holding }) else { return }
        state.withLock { $0.holding = false }
        releasing.signal()
    }

    /// The path's observer, on the command's thread.
    @Sendable func reached(_ reached: CommandPath.Point) {
        let (hold, whileHeld) = state.withLock { state in
            if reached == .carriedOut, state.counting { state.carriedOut += 1 }
            let hold = state.armed && reached == point
            if hold { (state.armed, state.holding) = (false, true) }
            return (hold, state.holding && !hold)
        }
        if hold {
            held.signal()
            releasing.wait()
        } else if whileHeld, reached == .waiting {
            waiting.signal()
        }
    }
}

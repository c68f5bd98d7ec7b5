import Foundation
import TestTiers
import Testing

@testable import QueuePlayer

/// The replayable soak (see ``Soak``). In every test run: a few minutes of audio under fixed seeds, and one seed
/// run twice to show it replays. `scripts/soak` runs a long one (24 hours of audio by default) under a seed of its
/// choosing, through `QUEUEPLAYER_SOAK_SECONDS` and `QUEUEPLAYER_SOAK_SEED`.
///
/// Alone under a sanitizer: it renders as fast as it can, for 2 s plainly and ten times that there.
@Suite("Soak: random commands against a model, on a stepped sink", .tier(.deterministic, sanitized: .alone))
struct SoakTests {
    @Test(
        "ten minutes of audio with a command every few seconds: the player agrees with the model throughout",
        arguments: [UInt64(1), 20_261_123])
    func soak(seed: UInt64) async throws {
        let report = try await runOnThread(Soak(seed: seed, audioSeconds: 600))
        print(report)
        #expect(report.commands > 150, "\(report)")
        // Every command came up; a command that never runs is a command not soaked.
        #expect(report.commandCounts.count == SoakCommand.allCases.count, "\(report)")
        // Resident memory is only reported here: other suites may share the process. `scripts/soak` runs alone and
        // checks that it stays flat.
    }

    @Test("one seed, run twice: the same commands, the same audio, the same digest")
    func replays() async throws {
        let first = try await runOnThread(Soak(seed: 77, audioSeconds: 120))
        let second = try await runOnThread(Soak(seed: 77, audioSeconds: 120))
        #expect(first.digest.value == second.digest.value)
        #expect(first.framesHeard == second.framesHeard)
        #expect(first.commands == second.commands)
    }

    @Test(
        "the long soak (scripts/soak)",
        .enabled(if: ProcessInfo.processInfo.environment["QUEUEPLAYER_SOAK_SECONDS"] != nil))
    func longSoak() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seconds = try #require(environment["QUEUEPLAYER_SOAK_SECONDS"].flatMap(Double.init))
        let seed = environment["QUEUEPLAYER_SOAK_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        print("soak seed \(seed): \(seconds) s of audio (replay with QUEUEPLAYER_SOAK_SEED=\(seed))")
        let report = try await runOnThread(Soak(seed: seed, audioSeconds: seconds))
        print(report)
        #expect(report.residentPeak - report.residentAfterWarmUp < 2, "resident memory grew: \(report)")
    }

    /// Runs the soak on a thread of its own: it blocks for as long as it plays, which must not hold one of the
    /// few threads Swift's tasks share.
    private func runOnThread(_ soak: Soak) async throws -> Soak.Report {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try soak.run() })
            }
        }
    }
}

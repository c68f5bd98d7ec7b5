import Foundation
import Testing

/// How much of the machine a test needs, which decides when `scripts/test` runs it. Every suite names its tier with
/// ``Testing/Trait/tier(_:)``; a run selects tiers with `QUEUEPLAYER_TEST_TIERS` (a comma-separated list of tier
/// names, or `all`), and a test of a tier not selected is skipped, saying so. Unset, the deterministic tier alone
/// runs: plain `swift test` needs no server and no quiet machine.
public enum TestTier: String, CaseIterable, Sendable {
    /// In this process, with no server, waiting on events rather than racing the clock: the same result beside any
    /// load, and covered in full by the sanitizers.
    case deterministic
    /// Starts real servers or processes (PulseAudio, PipeWire, icecast2, snapserver, D-Bus, the daemon) and holds
    /// beside the other tests of this tier and the deterministic one: runs in parallel with them.
    case servers
    /// Needs the machine to itself: sound in real time that the load of other tests would disturb, or a load that
    /// would disturb theirs. Runs one test at a time, after the others; each suite of it says why, with the
    /// measurement.
    case alone

    /// The variable a run selects tiers with.
    public static let variable = "QUEUEPLAYER_TEST_TIERS"

    /// A `QUEUEPLAYER_TEST_TIERS` that names no tier: the message names it and the tiers there are.
    public struct UnknownTier: Error, CustomStringConvertible {
        /// The name given, and the names there are; set once, read from any thread.
        public let description: String
    }

    /// The tiers this run selects. Throws ``UnknownTier`` for a name that is no tier, which fails every test that
    /// asks, so a misspelt selection cannot pass for an empty one. Any thread.
    public static func selected() throws -> Set<TestTier> {
        guard let value = ProcessInfo.processInfo.environment[variable] else { return [.deterministic] }
        if value == "all" { return Set(allCases) }
        var tiers: Set<TestTier> = []
        for name in value.split(separator: ",") {
            guard let tier = TestTier(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                let names = allCases.map(\.rawValue).joined(separator: ", ")
                throw UnknownTier(description: "\(variable): '\(name)' is no test tier; give some of \(names), or all")
            }
            tiers.insert(tier)
        }
        return tiers
    }

    /// Whether the tests run under a sanitizer: `QUEUEPLAYER_SANITIZER` is set (`scripts/sanitize` sets it).
    public static var isSanitized: Bool { ProcessInfo.processInfo.environment["QUEUEPLAYER_SANITIZER"] != nil }
}

extension Trait where Self == ConditionTrait {
    /// Runs the suite or test when its tier is selected (``TestTier/selected()``), and skips it otherwise, saying so.
    /// Give a suite one tier: a condition on a suite holds for its tests too, so a test of another tier goes in a
    /// suite of its own.
    public static func tier(_ tier: TestTier) -> Self {
        .enabled("not in this run's test tiers (\(TestTier.variable))") { try TestTier.selected().contains(tier) }
    }

    /// Runs the suite in `tier`, but in `sanitizedTier` under a sanitizer: for a suite that shares the machine
    /// plainly, and whose load, ten times heavier under a sanitizer, starves the others there.
    public static func tier(_ tier: TestTier, sanitized sanitizedTier: TestTier) -> Self {
        .tier(TestTier.isSanitized ? sanitizedTier : tier)
    }

    /// Skips the suite or test under a sanitizer, for `reason`: a measurement against the clock, which would measure
    /// the sanitizer, or code that replaces what the sanitizer itself interposes.
    public static func unsanitizable(_ reason: String) -> Self {
        .disabled(if: TestTier.isSanitized, Comment(rawValue: reason))
    }
}

import Foundation
import TestSupport
import TestTiers
import Testing

/// What `scripts/audible-time` prints, in milliseconds.
struct AudibleTimeReport: Decodable {
    struct Summary: Decodable {
        let median: Double
        let p95: Double
        let p99: Double
        let max: Double
        let samples: Int
    }

    struct Alignment: Decodable {
        let frames: Int
        let framesMatchingReference: Int

        enum CodingKeys: String, CodingKey {
            case frames
            case framesMatchingReference = "frames_matching_reference"
        }
    }

    let error: Summary
    let lateness: Summary
    let alignment: Alignment
}

/// Alone: it measures reported time against the recorded sound to a fraction of a millisecond; with both cores kept
/// busy its p95 reached 1.6 ms, over its 1.5 ms bound.
@Suite("Reported time against what the null sink's monitor recorded", .tier(.alone), .serialized)
struct AudibleTimeTests {
    /// The bounds this test states for a debug build on a loaded 2-core machine, in milliseconds: |median| and p95
    /// of the reported time's error, and p99 of how late a 10 ms observer's call runs after its time was heard.
    /// PulseAudio's are tight (the benchmark's target is |median| ≤ 0.2 ms, p95 ≤ 0.5 ms, measured at about
    /// 0.04 ms and 0.07 ms in release builds). On PipeWire's server (0.3.65) the reported time runs ahead of the
    /// sound by about 1.3 of the graph's quanta: its timing reports leave part of the graph's latency out, not yet
    /// accounted for. With the test server's quantum of at least 512 frames (scripts/pipewire-server) that is
    /// 13.5-17 ms (p95 20.5-23, observer lateness p99 20.5-22.5); it was 7.2 ms when parec's requests shrank the
    /// quantum to 256. The bound states that, so that any change is seen.
    static func bounds(_ kind: PulseServer.Kind) -> (median: Double, p95: Double, lateness: Double) {
        kind == .pipeWire ? (22, 28, 30) : (0.5, 1.5, 5)
    }

    /// How many times the measurement is taken before the test fails. On a shared 2-core machine one measurement
    /// can be spoiled by the scheduler rather than by the player: PipeWire's graph, which runs without real-time
    /// priority in a container, dropped audio in 3 of every 5 runs on one machine (the recording then matches the
    /// reference only up to the drop, and the sink's clock is fitted across it), and preemption has put a PulseAudio
    /// run's p95 at 1.6-3.9 ms where a quiet run reads under 0.5. Every missed attempt is printed with the steal and
    /// load the machine had meanwhile. A player that reports the wrong time, or whose sound is not bit-exact, misses
    /// in every attempt.
    static let attempts = 10

    @Test(
        "a 10 ms observer and currentTime report the time being heard, within the server's bounds",
        arguments: PulseServer.Kind.allCases)
    func reportedTimeIsHeardTime(_ kind: PulseServer.Kind) async throws {
        let server = try await PulseServer(name: "audible", kind: kind)
        var misses: [String] = []
        for attempt in 1...Self.attempts {
            let (result, load) = await MachineLoad.during {
                await Subprocess.run(
                    Fixtures.packageRoot.appendingPathComponent("scripts/audible-time").path,
                    [
                        "--server", server.address, "--playerctl", Fixtures.playerctl.path, "queueplayer",
                        Fixtures.mp3("sweep-44k-4s").path,
                    ], environment: Fixtures.isolatedEnvironment())
            }
            try #require(result.status == 0, "\(result.standardError)")
            let report = try JSONDecoder().decode(AudibleTimeReport.self, from: Data(result.standardOutput.utf8))
            let missedBounds = Self.boundsMissed(by: report, on: kind, during: load)
            if missedBounds.isEmpty { return }
            let missed = missedBounds + [load.inWords]
            print("\(kind), attempt \(attempt) of \(Self.attempts): \(missed.joined(separator: "; ")); measuring again")
            misses.append("attempt \(attempt): \(missed.joined(separator: "; "))\n\(result.standardOutput)")
        }
        Issue.record("every attempt missed a bound on \(kind):\n\(misses.joined(separator: "\n"))")
    }

    /// The bounds `report` misses on a server of `kind`, each said in words; empty when it meets them all.
    static func boundsMissed(
        by report: AudibleTimeReport, on kind: PulseServer.Kind, during load: MachineLoad.Change?
    ) -> [String] {
        let bounds = bounds(kind)
        var missed: [String] = []
        // Everything was heard, bit-exact: the alignment is exact and playback had no dropout (on a rewinding sink,
        // but for what its monitor misses at the stream's start: see PulseServer.Kind.rewindsAtStreamStart, and for
        // one quantum PipeWire's graph may drop: droppedQuanta).
        let unrecorded = kind.rewindsAtStreamStart ? 1_764 : kind.droppedQuanta(during: load).frames
        let alignment = report.alignment
        if alignment.framesMatchingReference < alignment.frames - unrecorded {
            missed.append("\(alignment.framesMatchingReference) of \(alignment.frames) frames heard bit-exact")
        }
        // 4 s less 0.5 s at each end, every 10 ms: 300 readings, less those a preemption made unsure.
        if report.error.samples < 200 { missed.append("\(report.error.samples) readings (at least 200)") }
        if abs(report.error.median) > bounds.median {
            missed.append("median error \(report.error.median) ms (bound \(bounds.median))")
        }
        if report.error.p95 > bounds.p95 { missed.append("p95 error \(report.error.p95) ms (bound \(bounds.p95))") }
        if report.lateness.p99 > bounds.lateness {
            missed.append("observer lateness p99 \(report.lateness.p99) ms (bound \(bounds.lateness))")
        }
        return missed
    }
}

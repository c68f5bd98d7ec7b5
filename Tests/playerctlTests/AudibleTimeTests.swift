import Foundation
import TestSupport
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

@Suite("Reported time against what the null sink's monitor recorded", .serialized)
struct AudibleTimeTests {
    /// The bounds this test states for a debug build on a loaded 2-core machine, in milliseconds: |median| and p95
    /// of the reported time's error, and p99 of how late a 10 ms observer's call runs after its time was heard.
    /// PulseAudio's are tight (the benchmark's target is |median| ≤ 0.2 ms, p95 ≤ 0.5 ms, measured at about
    /// 0.04 ms and 0.07 ms in release builds). On PipeWire's server (0.3.65) the reported time runs a steady 7.2 ms
    /// (p95 7.9 ms) ahead of the sound: its timing reports leave part of the graph's latency out, not yet
    /// accounted for; the bound states that, so that any change is seen.
    static func bounds(_ kind: PulseServer.Kind) -> (median: Double, p95: Double, lateness: Double) {
        kind == .pipeWire ? (9, 10, 12) : (0.5, 1.5, 5)
    }

    @Test(
        "a 10 ms observer and currentTime report the time being heard, within the server's bounds",
        arguments: PulseServer.Kind.allCases)
    func reportedTimeIsHeardTime(_ kind: PulseServer.Kind) async throws {
        let server = try await PulseServer(name: "audible", kind: kind)
        let result = await Subprocess.run(
            Fixtures.packageRoot.appendingPathComponent("scripts/audible-time").path,
            [
                "--server", server.address, "--playerctl", Fixtures.playerctl.path, "queueplayer",
                Fixtures.mp3("sweep-44k-4s").path,
            ], environment: Fixtures.isolatedEnvironment())
        try #require(result.status == 0, "\(result.standardError)")
        let report = try JSONDecoder().decode(AudibleTimeReport.self, from: Data(result.standardOutput.utf8))
        let bounds = Self.bounds(kind)

        // Everything was heard, bit-exact: the alignment is exact and playback had no dropout (on a rewinding sink,
        // but for what its monitor misses at the stream's start: see PulseServer.Kind.rewindsAtStreamStart, and for
        // one quantum PipeWire's graph may drop: droppedQuantumAllowance).
        let unrecorded = kind.rewindsAtStreamStart ? 1_764 : kind.droppedQuantumAllowance
        #expect(report.alignment.framesMatchingReference >= report.alignment.frames - unrecorded)
        // 4 s less 0.5 s at each end, every 10 ms: 300 readings, less those a preemption made unsure.
        #expect(report.error.samples >= 200)
        #expect(abs(report.error.median) <= bounds.median, "\(result.standardOutput)")
        #expect(report.error.p95 <= bounds.p95, "\(result.standardOutput)")
        #expect(report.lateness.p99 <= bounds.lateness, "\(result.standardOutput)")
    }
}

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

@Suite("Reported time against what the null sink's monitor recorded")
struct AudibleTimeTests {
    /// The bound this test states for a debug build on a loaded 2-core machine. The benchmark's target is tighter
    /// (|median| ≤ 0.2 ms, p95 ≤ 0.5 ms, measured at about 0.04 ms and 0.07 ms in release builds).
    static let medianBoundMilliseconds = 0.5
    static let p95BoundMilliseconds = 1.5
    /// How late a 10 ms observer's call may run after its time was heard (p99), on the same machine.
    static let latenessBoundMilliseconds = 5.0

    @Test("a 10 ms observer and currentTime report the time being heard, within 0.5 ms (median) and 1.5 ms (p95)")
    func reportedTimeIsHeardTime() async throws {
        let server = try await PulseServer(name: "audible")
        let result = await Subprocess.run(
            Fixtures.packageRoot.appendingPathComponent("scripts/audible-time").path,
            [
                "--server", server.address, "--playerctl", Fixtures.playerctl.path, "queueplayer",
                Fixtures.mp3("sweep-44k-4s").path,
            ], environment: Fixtures.isolatedEnvironment())
        try #require(result.status == 0, "\(result.standardError)")
        let report = try JSONDecoder().decode(AudibleTimeReport.self, from: Data(result.standardOutput.utf8))

        // Everything was heard, bit-exact: the alignment is exact and playback had no dropout.
        #expect(report.alignment.framesMatchingReference == report.alignment.frames)
        // 4 s less 0.5 s at each end, every 10 ms: 300 readings, less those a preemption made unsure.
        #expect(report.error.samples >= 200)
        #expect(abs(report.error.median) <= Self.medianBoundMilliseconds, "\(result.standardOutput)")
        #expect(report.error.p95 <= Self.p95BoundMilliseconds, "\(result.standardOutput)")
        #expect(report.lateness.p99 <= Self.latenessBoundMilliseconds, "\(result.standardOutput)")
    }
}

import Foundation
import TestSupport
import TestTiers
import Testing

/// The real-time rule, checked: the audio path (the renderer as each sink drives it) allocates nothing and takes no
/// lock during playback, seeks, pause and resume, a skip and joins across rates. `RenderPathAudit` plays the scenario
/// in a process of its own whose allocator and pthread locks are counted (see Tests/RealTimeAudit), and reports.
@Suite(
    "The audio path allocates nothing and takes no lock", .tier(.servers),
    .unsanitizable("its allocator interposer would displace the sanitizer's; scripts/test runs it uninstrumented"))
struct RenderPathAuditTests {
    private static let nothing = ["allocations": 0, "deallocations": 0, "lockAcquisitions": 0, "waits": 0]

    /// The null sink's thread also waits on a semaphore between periods (its stand-in for a sound card's clock, and
    /// its park while paused): those waits are its own, not the renderer's, and are not asserted.
    @Test("the null sink's render thread, real time, one stream at 44.1 kHz")
    func nullSinkThread() async throws {
        let report = try await Self.audit(["null"])
        #expect(report["nullSinkThread"]?.filter { $0.key != "waits" } == Self.nothing.filter { $0.key != "waits" })
        #expect(report["eventsThread"]?["allocations", default: 0] ?? 0 > 0, "the audit counted nothing at all")
    }

    @Test(
        "PulseAudio's write callbacks, outside libpulse's own calls",
        arguments: [
            PulseServer.Kind.pulseAudio, .pipeWire,
        ])
    func pulseAudioWriteCallbacks(_ kind: PulseServer.Kind) async throws {
        let server = try await PulseServer(name: "audit", kind: kind)
        let report = try await Self.audit(["pulse", server.address])
        await server.stop()
        #expect(report["writeCallbackCalls"]?["count", default: 0] ?? 0 > 0, "no write callback ran")
        #expect(report["writeCallbacks"] == Self.nothing)
        #expect(report["eventsThread"]?["allocations", default: 0] ?? 0 > 0, "the audit counted nothing at all")
    }

    private static func audit(_ arguments: [String]) async throws -> [String: [String: Int]] {
        let result = await Subprocess.run(Fixtures.builtExecutable("RenderPathAudit").path, arguments)
        try #require(result.status == 0, "RenderPathAudit \(arguments): \(result.standardError)")
        let report = try JSONDecoder().decode([String: [String: Int]].self, from: Data(result.standardOutput.utf8))
        print("RenderPathAudit \(arguments.first ?? ""): \(result.standardOutput)", terminator: "")
        return report
    }
}

import Foundation
import TestSupport
import TestTiers
import Testing

/// A daemon in a network namespace of its own (`unshare -n`, as root): no name resolves and nothing leaves the
/// machine, as on a box whose network is not up yet.
@Suite("A station whose name does not resolve", .tier(.servers), .timeLimit(.minutes(1)))
struct NameResolutionTests {
    @Test("with an item after it: asked for 10 s, logged once, then it fails alone naming the lookup; the rest plays")
    func unresolvedNameFailsAlone() async throws {
        let station = "http://station.invalid/live.mp3"
        let result = await Subprocess.run(
            "/usr/bin/unshare",
            [
                "-n", Fixtures.playerctl.path, "daemon", "--sink", "null", "--unpaced", "--exit-when-empty", station,
                Fixtures.mp3("join-1").path,
            ], environment: Fixtures.isolatedEnvironment())
        let log = result.standardError
        #expect(result.status != 0, "\(log)")
        #expect(playedFiles(log) == ["join-1.mp3"], "\(log)")
        #expect(log.contains("\(station): no answer it could play for 10 s: cannot resolve the host name"), "\(log)")
        let warnings = log.split(separator: "\n").filter { $0.contains("cannot reach the server; asking again") }
        #expect(warnings.count == 1, "one loss, one line: \(log)")
    }
}

import Foundation
import TestSupport
import TestTiers
import Testing

/// Runs the built `playerctl` with `arguments`.
private func playerctl(_ arguments: [String]) async -> Subprocess.Result {
    await Subprocess.run(Fixtures.playerctl.path, arguments, environment: Fixtures.isolatedEnvironment())
}

/// An https server whose certificate comes from a certificate authority made for the test with openssl: trusted by
/// the one daemon given `--tls-ca-file`, and by nothing else.
@Suite("https items from a server with an authority of its own", .tier(.servers), .timeLimit(.minutes(1)))
struct TLSTrustTests {
    @Test("an https item plays when its authority is given with --tls-ca-file, and is refused by name without it")
    func trustedAuthority() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("qp-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        try Data("subjectAltName=IP:127.0.0.1\n".utf8).write(to: URL(fileURLWithPath: path("server.ext")))
        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=QueuePlayer test CA",
                "-keyout", path("ca.key"), "-out", path("ca.pem"),
            ],
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", path("server.key"),
                "-out", path("server.csr"),
            ],
            [
                "x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                "-CAcreateserial", "-days", "1", "-extfile", path("server.ext"), "-out", path("server.pem"),
            ],
        ]
        for step in steps {
            let made = await Subprocess.run("/usr/bin/openssl", step)
            try #require(made.status == 0, "openssl \(step.joined(separator: " ")): \(made.standardError)")
        }
        let route = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("join-1"))))
        let server = try await HTTPTestServer(
            routes: ["/secret.mp3": route], tls: (path("server.pem"), path("server.key")))
        let url = server.url("/secret.mp3").absoluteString
        let daemon = ["daemon", "--sink", "null", "--unpaced", "--exit-when-empty"]

        let trusted = await playerctl(daemon + ["--tls-ca-file", path("ca.pem"), url])
        #expect(trusted.status == 0, "\(trusted.standardError)")
        #expect(playedFiles(trusted.standardError) == ["secret.mp3"], "\(trusted.standardError)")

        let refused = await playerctl(daemon + [url])
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("\(url): its server's TLS certificate is not trusted"))
        #expect(refused.standardError.contains("--tls-ca-file"), "\(refused.standardError)")

        let garbage = await playerctl(daemon + ["--tls-ca-file", path("server.ext"), url])
        #expect(garbage.status == 64, "\(garbage.standardError)")
        #expect(garbage.standardError.contains("--tls-ca-file \(path("server.ext")): "), "\(garbage.standardError)")
        try await server.stop()
    }
}

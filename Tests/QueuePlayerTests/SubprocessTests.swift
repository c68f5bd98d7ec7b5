import Foundation
import TestSupport
import TestTiers
import Testing

@Suite("The tests' helper processes", .tier(.deterministic))
struct SubprocessTests {
    /// The paths this process holds open, read from /proc/self/fd.
    private static func openPaths() throws -> Set<String> {
        let files = FileManager.default
        let descriptors = try files.contentsOfDirectory(atPath: "/proc/self/fd")
        return Set(descriptors.compactMap { try? files.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") })
    }

    /// Every helper a test runs must give back the descriptors of its output files, or a run of the alone tier
    /// exhausts a CI job's limit of 1,024 and later tests cannot open a file.
    @Test("a child's output files are not held open once it has started")
    func outputFilesClosed() throws {
        let output = Subprocess.temporaryFile("out")
        let error = Subprocess.temporaryFile("err")
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: error)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/echo")
        process.arguments = ["heard"]
        try Subprocess.start(process, standardOutput: output, standardError: error)
        process.waitUntilExit()
        let held = try Self.openPaths().intersection([output.path, error.path])
        #expect(held.isEmpty, "still open: \(held.sorted())")
        #expect(try String(contentsOf: output, encoding: .utf8) == "heard\n")
    }
}

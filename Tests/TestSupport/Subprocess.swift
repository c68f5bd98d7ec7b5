import Foundation
import Synchronization

/// Runs helper programs (scripts, parec, the built playerctl) for the tests.
public enum Subprocess {
    public struct Result: Sendable {
        public var status: Int32
        public var standardOutput: String
        public var standardError: String
    }

    /// Runs `executable` with `arguments` to completion and returns its status and output. Awaits the exit without
    /// holding a thread of the test runner's pool, so that timing-sensitive tests running beside it are not starved.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil
    ) async -> Result {
        let child = Child(executable, arguments, environment: environment)
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                child.process.terminationHandler = { _ in continuation.resume() }
                do {
                    try child.start()
                } catch {
                    child.process.terminationHandler = nil
                    continuation.resume(throwing: error)
                }
            }
        } catch {
            return child.failure(error)
        }
        return child.result()
    }

    /// Runs a helper to completion, blocking the calling thread: for set-up and clean-up outside any test's timing
    /// (a lazy static, a `deinit`). It needs no thread of the pool, so it cannot deadlock against it.
    public static func runBlocking(_ executable: String, _ arguments: [String]) -> Result {
        let child = Child(executable, arguments, environment: nil)
        do {
            try child.start()
        } catch {
            return child.failure(error)
        }
        child.process.waitUntilExit()
        return child.result()
    }

    /// Starts `process` with its standard output (or /dev/null) and standard error written to files and its input
    /// from /dev/null, then closes this process's handles on the files: the child has its own, and Foundation's
    /// `Process` keeps the ones it is given open (two descriptors leaked a child were enough to exhaust a limit of
    /// 1,024 in one run of the alone tier).
    public static func start(_ process: Process, standardOutput: URL?, standardError: URL) throws {
        let output = try standardOutput.map { try FileHandle(forWritingTo: $0) }
        let error = try FileHandle(forWritingTo: standardError)
        defer {
            try? output?.close()
            try? error.close()
        }
        process.standardOutput = output ?? FileHandle.nullDevice
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try spawn(process)
    }

    /// Starts `process`, one start at a time in this test process, from one thread kept for it (``ChildStarter``).
    /// Foundation's `Process` learns that a child has exited when the child's end of a socket pair closes. A child
    /// started by another thread at that moment can inherit that end (its list of descriptors to close is made before
    /// the pair exists), and the first child's exit is then seen only when the second exits. Measured with a thread
    /// starting 2 s children in a loop beside 200 starts of 10 ms ones: 3 to 6 of the 200 were seen to end only with
    /// a 2 s child that held their end; none when starts take turns. Every child of a test is started through this.
    /// Any thread; blocks while the start, and any start before it, is under way.
    public static func spawn(_ process: Process) throws {
        try ChildStarter.shared.run { try process.run() }
    }

    /// Why a server a test needs could not be run.
    public struct LaunchError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts the server `executable` (a Debian package's) with `arguments` and returns it running, its input and
    /// output on /dev/null; `onExit` is called (on any thread) when it exits. Throws an error naming it and
    /// `scripts/setup` when it cannot be run.
    public static func launch(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        onExit: (@Sendable (Process) -> Void)? = nil
    )
        throws -> Process
    {
        let process = Process()
        process.terminationHandler = onExit
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try spawn(process)
        } catch {
            throw LaunchError(description: "cannot run \(executable) (scripts/setup installs it): \(error)")
        }
        return process
    }

    /// An empty file in the test process's scratch folder (``Scratch``), unique to this call.
    public static func temporaryFile(_ suffix: String) -> URL {
        let url = URL(fileURLWithPath: "\(Scratch.uniquePath("file")).\(suffix)")
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        return url
    }

    /// A child process whose output goes to temporary files, so a chatty child never blocks on a full pipe.
    private final class Child: @unchecked Sendable {
        // Used by one test at a time; the termination handler only resumes a continuation.
        let process = Process()
        private let executable: String
        private let outputURL = temporaryFile("out")
        private let errorURL = temporaryFile("err")

        init(_ executable: String, _ arguments: [String], environment: [String: String]?) {
            self.executable = executable
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            if let environment { process.environment = environment }
        }

        deinit {
            try? FileManager.default.removeItem(at: outputURL)
            try? FileManager.default.removeItem(at: errorURL)
        }

        func start() throws {
            try Subprocess.start(process, standardOutput: outputURL, standardError: errorURL)
        }

        func result() -> Result {
            Result(
                status: process.terminationStatus,
                standardOutput: (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "",
                standardError: (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "")
        }

        func failure(_ error: any Error) -> Result {
            Result(status: -1, standardOutput: "", standardError: "\(executable): \(error)")
        }
    }
}

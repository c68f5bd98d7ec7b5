import Foundation

/// A `playerctl daemon` started the way a shell or systemd starts it, for tests that talk to it while it runs:
/// signals unblocked (the test runner's threads block SIGINT and SIGTERM, and children inherit that mask), standard
/// input from /dev/null, standard error captured. Killed if still running when released.
public final class RunningDaemon {
    private let process = Process()
    private let logFile = Subprocess.temporaryFile("log")
    /// Finishes when the process exits.
    private let exited: AsyncStream<Void>

    /// Starts `playerctl daemon ARGUMENTS`, with `bus` as its session bus if given.
    public init(_ arguments: [String], bus: SessionBus? = nil) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "python3", "-c",
                "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); "
                    + "os.execv(sys.argv[1], sys.argv[1:])",
                Fixtures.playerctl.path, "daemon",
            ] + arguments
        let environment = Fixtures.isolatedEnvironment()
        process.environment = bus?.environment(environment) ?? environment
        let (exited, exit) = AsyncStream.makeStream(of: Void.self)
        self.exited = exited
        process.terminationHandler = { _ in exit.finish() }
        try Subprocess.start(process, standardOutput: nil, standardError: logFile)
    }

    /// The daemon's process id (the helper that unblocks signals execs it, so the pid stays).
    public var pid: Int32 { process.processIdentifier }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        // A crash is printed whatever the test expected: the Swift runtime's backtrace (which keeps the process
        // alive, unresponsive, for seconds) is otherwise lost with the log, and a test sees only a silent daemon.
        let log = log
        if log.contains("*** Program crashed") || log.contains("Fatal error") {
            FileHandle.standardError.write(Data("== playerctl daemon \(pid) crashed; its log:\n\(log)\n".utf8))
        }
        try? FileManager.default.removeItem(at: logFile)
    }

    /// Everything logged so far.
    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Sends `signal` to the daemon.
    public func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Each thread's signal masks as `/proc` shows them now (pending for the thread and the process, blocked, ignored,
    /// caught), for the message of a test whose signal seems not to have been acted on: a signal still pending was
    /// never read, one neither pending nor acted on was taken somewhere.
    public func signalMasks() -> String {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        guard !tasks.isEmpty else { return "(the daemon has exited: no signal masks to show)" }
        let fields = ["Name:", "SigPnd:", "ShdPnd:", "SigBlk:", "SigIgn:", "SigCgt:"]
        return tasks.sorted().map { task in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            let lines = status.split(separator: "\n").filter { line in fields.contains { line.hasPrefix($0) } }
            return "thread \(task): " + lines.joined(separator: " ")
        }.joined(separator: "\n")
    }

    /// Waits for the daemon to exit and returns its status, or nil if it was still running after `seconds` (it is
    /// then killed).
    public func exitStatus(within seconds: Double = 5) async -> Int32? {
        let exited = exited
        let inTime = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in exited {}
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if !inTime || process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }
}

import Foundation
import Synchronization

/// A server a test runs as a child process (icecast2, snapserver): started, and started again after a stop, with
/// the same command line; up once a port of 127.0.0.1 answers. Threading: any thread.
public final class ServerProcess: Sendable {
    private let executable: String
    private let arguments: [String]
    private let readyPort: Int
    private let log: String
    private let running = Mutex(Running())
    /// Called when a process that was up exits without ``stop()``.
    private let crashHandler = Mutex<(@Sendable () -> Void)?>(nil)

    private struct Running {
        /// The running process; nil while stopped.
        var process: Process?
        /// Signalled when `process` has exited (its termination handler).
        var exited = DispatchSemaphore(value: 0)
        /// True once `process` answered on the ready port: an exit after that is a crash.
        var isUp = false
        /// True once `process`'s crash was told: its termination handler and ``start()`` may both find it.
        var crashTold = false
    }

    /// A server run as `executable arguments`, up once `readyPort` answers; `log` is where to look when it does not
    /// come up. Not started yet.
    public init(_ executable: String, _ arguments: [String], readyPort: Int, log: String) {
        self.executable = executable
        self.arguments = arguments
        self.readyPort = readyPort
        self.log = log
    }

    deinit { stop() }

    /// Starts the server and returns once it answers; throws, naming its log, when it exits or does not answer
    /// within 5 s.
    public func start() async throws {
        let exited = DispatchSemaphore(value: 0)
        let process = try Subprocess.launch(executable, arguments) { [weak self] ended in
            exited.signal()
            self?.tellCrash(of: ended)
        }
        running.withLock { $0 = Running(process: process, exited: exited) }
        // icecast2, snapserver and mpd tell no one when they listen (no sd_notify without systemd, nothing printed
        // that says so): the port is looked at every 10 ms, from a task that yields its thread meanwhile.
        let deadline = Date().addingTimeInterval(5)
        while !LoopbackPort.answers(readyPort) {
            guard Date() < deadline, process.isRunning else {
                stop()
                throw Subprocess.LaunchError(
                    description: "\(executable) did not start on port \(readyPort); see \(log)")
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        running.withLock { if $0.process === process { $0.isUp = true } }
        // Ended between answering and being marked up: its termination handler did not count it as a crash.
        if !process.isRunning { tellCrash(of: process) }
    }

    /// Stops the server at once, as a crash would: its clients lose their connections and its ports refuse until
    /// ``start()``. SIGKILL, because a child launched from one of the test runner's threads may inherit a mask that
    /// blocks SIGTERM (the daemon's signal handling blocks it, in-process too): `terminate()` then did nothing, and
    /// the wait for the exit never ended. The exit is waited for on the termination handler, not with
    /// `waitUntilExit()`, which gives the calling thread a run loop (three descriptors) for the rest of its life.
    public func stop() {
        let stopping = running.withLock { running in running.process.take().map { ($0, running.exited) } }
        guard let (process, exited) = stopping else { return }
        kill(process.processIdentifier, SIGKILL)
        exited.wait()
    }

    /// Starts the server again if it exited without being told to (it crashed), and says whether it did. Nothing
    /// when it runs, or was stopped with ``stop()``. Throws as ``start()`` does.
    public func startAgainIfItDied() async throws -> Bool {
        let died = running.withLock { running in
            guard let process = running.process, !process.isRunning else { return false }
            running.process = nil
            return true
        }
        if died { try await start() }
        return died
    }

    /// Calls `handler` (on any thread) once for each process of this server that exits after it was up without
    /// being told to: it crashed. The handler may call ``startAgainIfItDied()``.
    public func onCrash(_ handler: @escaping @Sendable () -> Void) {
        crashHandler.withLock { $0 = handler }
    }

    /// The running process's id; nil while stopped.
    public var processIdentifier: pid_t? { running.withLock { $0.process?.processIdentifier } }

    private func tellCrash(of ended: Process) {
        let crashed = running.withLock { running in
            guard running.process === ended, running.isUp, !running.crashTold, !ended.isRunning else { return false }
            running.crashTold = true
            return true
        }
        if crashed { crashHandler.withLock { $0 }?() }
    }
}

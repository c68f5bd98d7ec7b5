import Foundation
import Synchronization

/// A server a test runs as a child process (icecast2, snapserver): started, and started again after a stop, with
/// the same command line; up once a port of 127.0.0.1 answers. Threading: any thread.
public final class ServerProcess: Sendable {
    private let executable: String
    private let arguments: [String]
    private let readyPort: Int
    private let log: String
    /// The running process; nil while stopped.
    private let process = Mutex<Process?>(nil)

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
    public func start() throws {
        let process = try Subprocess.launch(executable, arguments)
        self.process.withLock { $0 = process }
        let deadline = Date().addingTimeInterval(5)
        while !LoopbackPort.answers(readyPort) {
            guard Date() < deadline, process.isRunning else {
                stop()
                throw Subprocess.LaunchError(
                    description: "\(executable) did not start on port \(readyPort); see \(log)")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// Stops the server at once, as a crash would: its clients lose their connections and its ports refuse until
    /// ``start()``. SIGKILL, because a child launched from one of the test runner's threads may inherit a mask that
    /// blocks SIGTERM (the daemon's signal handling blocks it, in-process too): `terminate()` then did nothing, and
    /// the wait for the exit never ended.
    public func stop() {
        guard let process = process.withLock({ $0.take() }) else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Starts the server again if it exited without being told to (it crashed), and says whether it did. Nothing
    /// when it runs, or was stopped with ``stop()``. Throws as ``start()`` does.
    public func startAgainIfItDied() throws -> Bool {
        let died = process.withLock { process in
            guard let running = process, !running.isRunning else { return false }
            process = nil
            return true
        }
        if died { try start() }
        return died
    }

    /// The running process's id; nil while stopped.
    public var processIdentifier: pid_t? { process.withLock { $0?.processIdentifier } }
}

import Foundation
import Synchronization

/// A long-running helper (such as `playerctl --follow`) whose standard output is read line by line as it comes:
/// tests wait on its lines. Killed when stopped or released.
public final class LineReader: Sendable {
    private let process: Process
    private let lines: AsyncStream<String>
    private let all = Printed()

    /// The lines so far, shared with the reading thread.
    private final class Printed: Sendable {
        let lines = Mutex<[String]>([])
    }

    /// Starts `executable` with `arguments` and `environment`.
    public init(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardOutput = pipe
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        self.lines = lines
        self.process = process
        let all = all
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = pipe.fileHandleForReading.availableData
                guard !chunk.isEmpty else { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[(newline + 1)...])
                    all.lines.withLock { $0.append(line) }
                    continuation.yield(line)
                }
            }
            continuation.finish()
        }
        try Subprocess.spawn(process)
    }

    deinit {
        stop()
    }

    /// Waits for the next line (lines are taken in order), or nil when the helper ends or after `timeout` seconds.
    public func nextLine(within timeout: Double = 10) async -> String? {
        let lines = lines
        return await withTaskGroup(of: String?.self) { group in
            group.addTask {
                for await line in lines { return line }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(timeout))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Every line printed so far.
    public var printed: [String] { all.lines.withLock { $0 } }

    /// Kills the helper.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

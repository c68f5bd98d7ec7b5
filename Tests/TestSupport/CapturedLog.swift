import Logging
import Synchronization

/// A logger whose messages (with their levels) the test can read back.
public final class CapturedLog: Sendable {
    /// A log keeping the messages at `level` and above: every message by default; a run of hours keeps fewer, so
    /// that what it holds does not grow its memory.
    public init(keepingFrom level: Logger.Level = .trace) {
        self.level = level
    }

    private let level: Logger.Level
    private let lines = Mutex<[(Logger.Level, String)]>([])

    /// A logger that appends every message kept here.
    public var logger: Logger {
        Logger(label: "test") { [level] _ in CapturingHandler(log: self, logLevel: level) }
    }

    /// Records one message.
    public func append(_ level: Logger.Level, _ message: String) { lines.withLock { $0.append((level, message)) } }

    /// The messages logged at `level`.
    public func messages(at level: Logger.Level) -> [String] {
        lines.withLock { lines in lines.filter { $0.0 == level }.map(\.1) }
    }

    /// Every message, whatever its level.
    public var all: [String] { lines.withLock { $0.map(\.1) } }
}

private struct CapturingHandler: LogHandler {
    let log: CapturedLog
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        log.append(event.level, "\(event.message)")
    }
}

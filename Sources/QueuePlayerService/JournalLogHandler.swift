import Glibc
import Logging

/// Log lines for the systemd journal: when the daemon runs under systemd (`JOURNAL_STREAM` names its stderr), each
/// line starts with the syslog priority (`<3>`) journald reads, and carries no timestamp of its own (the journal
/// keeps one). Elsewhere the daemon keeps swift-log's usual stderr lines.
package struct JournalLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .info
    private let label: String

    package init(label: String) {
        self.label = label
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// True when stderr is the journal stream systemd connected (its device and inode match `JOURNAL_STREAM`).
    package static var stderrIsJournal: Bool {
        guard let value = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
        var status = stat()
        guard fstat(STDERR_FILENO, &status) == 0 else { return false }
        return value == "\(status.st_dev):\(status.st_ino)"
    }

    package func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let details =
            merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
        var line = "<\(Self.priority(event.level))>\(event.message)\(details)\n"
        line.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
    }

    /// syslog priorities: 2 critical, 3 error, 4 warning, 5 notice, 6 info, 7 debug and trace.
    package static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .critical: 2
        case .error: 3
        case .warning: 4
        case .notice: 5
        case .info: 6
        case .debug, .trace: 7
        }
    }
}

import Dispatch
import Glibc
import QueuePlayer

/// `--time-trace FILE`: a diagnostic record of what a 10 ms periodic observer reported, for checking reported
/// time against a recording of the output (`scripts/audible-time`).
///
/// Each observer call appends one line, `BEFORE OBSERVED REPORTED AFTER`, in seconds: CLOCK_MONOTONIC just before
/// and just after the player's audible time was read, the observer's item time, and that audible time. Lines are written on the
/// trace's own serial queue, never on the audio path.
package final class TimeTrace: Sendable {
    private let descriptor: Int32
    private let queue = DispatchQueue(label: "queueplayer.time-trace")

    /// Creates (or truncates) `path`. Throws a message naming the file when it cannot be written.
    package init(path: String) throws(TimeTraceError) {
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw TimeTraceError(message: "cannot write the time trace \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        close(descriptor)
    }

    /// Starts tracing `player`'s item time every 10 ms.
    package func attach(to player: QueuePlayer) {
        _ = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 100), queue: queue) {
            [self] observed in
            let before = Self.monotonicSeconds()
            let reported = player.currentTime().seconds
            let after = Self.monotonicSeconds()
            append("\(before) \(observed.seconds) \(reported) \(after)\n")
        }
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    private func append(_ line: String) {
        var line = line
        line.withUTF8 { bytes in _ = write(descriptor, bytes.baseAddress, bytes.count) }
    }
}

/// The trace file could not be opened.
package struct TimeTraceError: Error, CustomStringConvertible {
    package let message: String
    package var description: String { message }
}

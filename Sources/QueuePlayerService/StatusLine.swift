import Glibc
import QueuePlayer

/// The live status line on the terminal: `▶ 01-morning.mp3  0:03 / 0:08`, and while a station's server is asked
/// again, what for (`▶ live.mp3  0:41 / live  reconnecting to radio.example.org: connection refused, next try in 2 s`).
///
/// Written to standard output only when it is a terminal; rewritten in place with a carriage return.
/// Used from one task at a time.
package struct StatusLine {
    /// True when standard output is a terminal, so a status line makes sense.
    package static var isAvailable: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Redraws the line for `player`'s current item; draws nothing while there is none.
    package func render(_ player: QueuePlayer) {
        guard let item = player.currentItem else { return }
        let symbol = player.playbackState == .playing ? "▶" : "⏸"
        let elapsed = player.currentTime()
        var text =
            "\(symbol) \(item.url.lastPathComponent)  \(Self.clock(elapsed.isNumeric ? elapsed.seconds : 0)) / "
            + Self.length(of: item)
        if player.reasonForWaitingToPlay != nil, let loss = item.connectionLoss { text += "  \(loss)" }
        write("\r\u{1B}[2K" + text)
    }

    /// Ends the line, so that later output starts on a fresh one.
    package func finish() {
        write("\n")
    }

    private func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in _ = Glibc.write(STDOUT_FILENO, bytes.baseAddress, bytes.count) }
    }

    /// The item's length as the status line shows it: a clock, or "live" for a live stream.
    package static func length(of item: PlayerItem) -> String {
        clock(item.isLive ? .infinity : item.duration.isNumeric ? item.duration.seconds : 0)
    }

    /// `m:ss`, or `h:mm:ss` from an hour on; "live" for the endless length of a live stream.
    package static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "live" }
        let total = Int(seconds.rounded(.down))
        let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
        func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(secs))" : "\(minutes):\(twoDigits(secs))"
    }
}

/// A playback stream's timing as a server last reported it, and what it implies about the frame being heard since.
///
/// The server reports how far it has read the stream and how much of that still waits in the sink; between reports
/// the listener moves on in real time while the stream plays. A plain value, computed under the sink's lock.
struct StreamTimingReport: Equatable, Sendable {
    /// Frames written to the stream so far (kept current by local writes between reports).
    var writtenFrames: Int64
    /// Frames the server had taken from the stream at the report.
    var readFrames: Int64
    /// How far behind `readFrames` the listener was at the report: the sink's latency, in microseconds.
    var sinkMicroseconds: Int64
    /// True when the stream was playing at the report and still is (not corked, not prebuffering, no underrun).
    var isAdvancing: Bool

    /// Frames written but not yet heard, `age` microseconds after the report, at `rate` frames a second. Never
    /// negative: the listener cannot get ahead of what was written.
    func latencyFrames(reportAgeMicroseconds age: Int64, rate: Int) -> Int {
        let microsecondsHeardSinceRead = (isAdvancing ? max(0, age) : 0) - sinkMicroseconds
        let heard = readFrames + microsecondsHeardSinceRead * Int64(rate) / 1_000_000
        return Int(max(0, writtenFrames - heard))
    }
}

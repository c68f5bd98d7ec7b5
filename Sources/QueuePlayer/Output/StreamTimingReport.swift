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

    /// The stream frame being heard `age` microseconds after the report, at `rate` frames a second, counted as
    /// `writtenFrames` is: never beyond it, since the listener cannot get ahead of what was written.
    func heardFrame(reportAgeMicroseconds age: Int64, rate: Int) -> Int64 {
        let microsecondsHeardSinceRead = (isAdvancing ? max(0, age) : 0) - sinkMicroseconds
        return min(writtenFrames, readFrames + microsecondsHeardSinceRead * Int64(rate) / 1_000_000)
    }
}

/// The frame heard, carried forward from each report, and never moved back between two changes of the stream (its
/// start, a cork, an uncork, a flush): a report may show that the server read less than the one before implied,
/// when the stream ran dry or the server ran late after that report, and the time then stands where it was until the
/// sound catches up, as libpulse's own clock does for a stream that does not ask for `PA_STREAM_NOT_MONOTONIC`. A
/// plain value, kept under the sink's lock.
struct MonotonicHeardFrame: Sendable {
    private var floor: Int64?

    /// Forgets the frame last told: the stream started, corked, uncorked or was flushed, and its next report is
    /// taken as it is.
    mutating func reset() { floor = nil }

    /// Frames written but not yet heard, `age` microseconds after `report`, at `rate` frames a second (never
    /// negative), implying no earlier frame than the last call since ``reset()`` did.
    mutating func latencyFrames(_ report: StreamTimingReport, reportAgeMicroseconds age: Int64, rate: Int) -> Int {
        var heard = report.heardFrame(reportAgeMicroseconds: age, rate: rate)
        if let floor { heard = max(heard, floor) }
        floor = heard
        return Int(max(0, report.writtenFrames - heard))
    }
}

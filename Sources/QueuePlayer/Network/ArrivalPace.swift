/// Tells a server that sends too slowly to play from: one that trickles a byte a second defeats the read timeout, and
/// the item would wait for ever.
///
/// The bytes of one connection are counted over windows of ``window``; a window in which fewer than a quarter of the
/// audio's bytes a second arrived is too slow, unless the download waited for room in the buffer meanwhile (paused,
/// or a full buffer), which starts a new window. A quarter of real time means a stall after every few seconds heard.
/// Threading: a value, owned by one download.
struct ArrivalPace {
    /// How long each count lasts.
    static let window = Duration.seconds(10)
    /// The least share of the audio's byte rate that keeps an item playable.
    static let leastShare = 0.25
    /// The rate assumed until the audio's own is known: MP3's lowest bitrate, 8 kbit/s.
    static let lowestByteRate = 1_000.0

    private var start: ContinuousClock.Instant
    private var bytes = 0

    /// Starts counting at `now`.
    init(startingAt now: ContinuousClock.Instant) {
        start = now
    }

    /// Starts a new window at `now`: the download waited for room, so the server was not to blame.
    mutating func restart(at now: ContinuousClock.Instant) {
        start = now
        bytes = 0
    }

    /// Counts `count` bytes arrived at `now`. Returns the window's rate in bytes a second when a window has closed
    /// below a quarter of `audioByteRate` (or of ``lowestByteRate`` while it is unknown); nil otherwise.
    mutating func arrived(_ count: Int, at now: ContinuousClock.Instant, audioByteRate: Double?) -> Double? {
        bytes += count
        let elapsed = (now - start) / .seconds(1)
        guard elapsed >= Self.window / .seconds(1) else { return nil }
        let rate = Double(bytes) / elapsed
        restart(at: now)
        return rate < Self.leastShare * max(audioByteRate ?? 0, Self.lowestByteRate) ? rate : nil
    }
}

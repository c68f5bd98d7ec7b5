import Dispatch
import Synchronization

/// One time observer: the item times it reports, and the gate its calls pass through.
///
/// Callbacks run on the observer's queue, never on the audio path or the engine's threads, with
/// ``ObserverCall/current`` bound to what the player looked like when the time fell due (see ``ObserverGate`` for
/// the removal guarantee).
final class TimeObserver: Sendable {
    /// Which item times an observer reports.
    enum Schedule: Sendable {
        /// Every multiple of the interval, plus start, stop and seek.
        case periodic(MediaTime)
        /// Each listed time (sorted, numeric) as playback crosses it.
        case boundaries([MediaTime])
    }

    /// Takes the player's picture for a call of the block: run where the time falls due, before the call is queued.
    /// Nil when no call is to be made: the time's item has left the player, or the player is gone.
    typealias Picture = @Sendable (MediaTime, QueueEntry) -> ObserverCall?

    let schedule: Schedule
    private let gate: ObserverGate
    private let block: @Sendable (MediaTime) -> Void
    private let picture: Picture?
    /// The entry and time delivered last, so that a periodic observer never reports the same time twice in a row.
    private let lastDelivered = Mutex<(entryID: Int, time: MediaTime)?>(nil)

    init(
        schedule: Schedule, queue: DispatchQueue, picture: Picture? = nil,
        block: @escaping @Sendable (MediaTime) -> Void
    ) {
        self.schedule = schedule
        gate = ObserverGate(queue: queue)
        self.picture = picture
        self.block = block
    }

    /// Calls the block with `time` (in `entry`) on the observer's queue, unless the observer has been removed by
    /// then, the picture says no call is to be made, or it is periodic and `time` repeats the time it delivered last
    /// in the same entry (a seek and the play after it both report the same time).
    func deliver(_ time: MediaTime, in entry: QueueEntry) {
        var call = ObserverCall(time: time)
        if let picture {
            guard let taken = picture(time, entry) else { return }
            call = taken
        }
        if isPeriodic {
            let repeated = lastDelivered.withLock { last in
                defer { last = (entry.id, time) }
                return last.map { $0.entryID == entry.id && $0.time == time } ?? false
            }
            guard !repeated else { return }
        }
        gate.run(call) { [block] in block(time) }
    }

    /// Stops all further calls (see ``ObserverGate/close()``).
    func deactivate() {
        gate.close()
    }

    /// True for a periodic observer, which also reports start, stop and seek.
    var isPeriodic: Bool {
        if case .periodic = schedule { true } else { false }
    }

    /// The `index`th time the observer reports in an item, or nil when there is none.
    func time(at index: Int64) -> MediaTime? {
        switch schedule {
        case .periodic(let interval): interval * index
        case .boundaries(let times): index < times.count ? times[Int(index)] : nil
        }
    }

    /// The index of the first time at or after item frame `frame` at `rate`.
    func firstIndex(atOrAfterFrame frame: Int, rate: Int) -> Int64 {
        let position = MediaTime(value: Int64(frame), timescale: Int32(rate))
        switch schedule {
        case .periodic(let interval):
            // k × interval ≥ frame / rate  ⇔  k ≥ frame × timescale / (value × rate), rounded up.
            let numerator = Int64(frame) * Int64(interval.timescale)
            let denominator = interval.value * Int64(rate)
            return denominator > 0 ? max(0, (numerator + denominator - 1) / denominator) : 0
        case .boundaries(let times):
            return Int64(times.firstIndex { $0 >= position } ?? times.count)
        }
    }

    /// True when the frame at `time` has been heard, `heardFrames` frames into an item at `rate`.
    static func isHeard(_ time: MediaTime, heardFrames: Int, rate: Int) -> Bool {
        time < MediaTime(value: Int64(heardFrames), timescale: Int32(rate))
    }
}

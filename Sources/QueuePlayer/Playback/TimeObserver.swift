import Dispatch
import Glibc
import Synchronization

/// Identifies a time observer, for ``PlaybackEngine/removeTimeObserver(_:)``.
public struct TimeObserverToken: Hashable, Sendable {
    let id: Int
}

/// One time observer: the item times it reports, and a gate that lets removal promise that no call starts
/// afterwards.
///
/// Callbacks run on the observer's queue, never on the audio path or the engine's threads. Each runs inside the
/// gate; ``deactivate()`` clears the flag and then passes through the gate, so once it returns no call can start.
/// An observer removing itself from inside its own callback does not wait for itself.
final class TimeObserver: Sendable {
    /// Which item times an observer reports.
    enum Schedule: Sendable {
        /// Every multiple of the interval, plus start, stop and seek.
        case periodic(MediaTime)
        /// Each listed time (sorted, numeric) as playback crosses it.
        case boundaries([MediaTime])
    }

    let schedule: Schedule
    private let queue: DispatchQueue
    private let block: @Sendable (MediaTime) -> Void
    private let isActive = Atomic<Bool>(true)
    private let gate = Mutex<Void>(())
    private let callingThread = Atomic<UInt>(0)
    private let lastDelivered = Mutex<MediaTime?>(nil)

    init(schedule: Schedule, queue: DispatchQueue, block: @escaping @Sendable (MediaTime) -> Void) {
        self.schedule = schedule
        self.queue = queue
        self.block = block
    }

    /// Calls the block with `time` on the observer's queue, unless the observer has been removed by then, or `time`
    /// repeats the time delivered last (a seek and the play after it both report the same time).
    func deliver(_ time: MediaTime) {
        let repeated = lastDelivered.withLock { last in
            defer { last = time }
            return last == time
        }
        guard !repeated else { return }
        queue.async { [self] in
            gate.withLock { _ in
                guard isActive.load(ordering: .acquiring) else { return }
                callingThread.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .releasing)
                defer { callingThread.store(0, ordering: .releasing) }
                block(time)
            }
        }
    }

    /// Stops all further calls. Waits for a call in progress on another thread to finish.
    func deactivate() {
        isActive.store(false, ordering: .releasing)
        if callingThread.load(ordering: .acquiring) != UInt(bitPattern: Int(bitPattern: pthread_self())) {
            gate.withLock { _ in }
        }
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

import Dispatch
import Glibc
import Synchronization

/// Identifies a time observer, for ``PlaybackEngine/removeTimeObserver(_:)``.
public struct TimeObserverToken: Hashable, Sendable {
    let id: Int
}

/// One periodic time observer: its interval, and a gate that lets removal promise that no call starts afterwards.
///
/// Callbacks run on the observer's queue, never on the audio path or the engine's threads. Each runs inside the
/// gate; ``deactivate()`` clears the flag and then passes through the gate, so once it returns no call can start.
/// An observer removing itself from inside its own callback does not wait for itself.
final class PeriodicTimeObserver: Sendable {
    let interval: MediaTime
    private let queue: DispatchQueue
    private let block: @Sendable (MediaTime) -> Void
    private let isActive = Atomic<Bool>(true)
    private let gate = Mutex<Void>(())
    private let callingThread = Atomic<UInt>(0)
    private let lastDelivered = Mutex<MediaTime?>(nil)

    init(interval: MediaTime, queue: DispatchQueue, block: @escaping @Sendable (MediaTime) -> Void) {
        self.interval = interval
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

    /// The first multiple of the interval whose time falls at or after item frame `frame` at `rate`.
    func firstMultiple(atOrAfterFrame frame: Int, rate: Int) -> Int64 {
        var multiple: Int64 = 0
        // k × interval ≥ frame / rate  ⇔  k ≥ frame × timescale / (value × rate), rounded up.
        let numerator = Int64(frame) * Int64(interval.timescale)
        let denominator = interval.value * Int64(rate)
        if denominator > 0 { multiple = (numerator + denominator - 1) / denominator }
        return max(0, multiple)
    }

    /// True when the frame at `time` has been heard, `heardFrames` frames into an item at `rate`.
    static func isHeard(_ time: MediaTime, heardFrames: Int, rate: Int) -> Bool {
        time < MediaTime(value: Int64(heardFrames), timescale: Int32(rate))
    }
}

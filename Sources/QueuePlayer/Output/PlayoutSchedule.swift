import Synchronization

/// When a remote player plays what a sink sent it: runs of sink frames, each heard at the stream's rate from an
/// instant. The sink's thread records each period as it sends it; any thread asks how many frames are heard by an
/// instant.
///
/// Lock-free: a sequence lock over a fixed ring of the latest runs (one writer), as ``RenderPosition`` publishes
/// its reading; recording never waits or allocates. More runs than the ring holds within the remote buffer (a
/// pause and a play dozens of times in a second) make the oldest ones read as heard through.
final class PlayoutSchedule: Sendable {
    /// The rate the runs are heard at.
    let sampleRate: Int

    private let sequence = Atomic<Int>(0)
    /// Runs recorded in all; run `n` lives in slot `n % capacity`.
    private let recorded = Atomic<Int>(0)
    private let firstFrames: InlineArray<64, Atomic<Int>> = InlineArray { _ in Atomic(0) }
    private let endFrames: InlineArray<64, Atomic<Int>> = InlineArray { _ in Atomic(0) }
    /// The uptime nanoseconds at which each run's first frame is heard.
    private let startInstants: InlineArray<64, Atomic<UInt64>> = InlineArray { _ in Atomic(0) }

    /// Runs kept.
    private var capacity: Int { firstFrames.count }

    /// An empty schedule for a stream at `sampleRate`.
    init(sampleRate: Int) {
        self.sampleRate = sampleRate
    }

    /// Records that `frames` are heard from `instant` (uptime nanoseconds) on. Extends the latest run when they
    /// follow it without a gap in frames or time (within a millisecond: periods are whole nanoseconds). Returns true
    /// when they start a new run. The sink's thread only.
    @discardableResult
    func record(_ frames: Range<Int>, heardFrom instant: UInt64) -> Bool {
        let count = recorded.load(ordering: .relaxed)
        if count > 0 {
            let slot = (count - 1) % capacity
            let first = firstFrames[slot].load(ordering: .relaxed)
            let end = endFrames[slot].load(ordering: .relaxed)
            let expected =
                startInstants[slot].load(ordering: .relaxed)
                + DeviceClock.nanoseconds(for: end - first, rate: sampleRate)
            let drift = instant > expected ? instant - expected : expected - instant
            if end == frames.lowerBound, drift < 1_000_000 {
                write { endFrames[slot].store(frames.upperBound, ordering: .relaxed) }
                return false
            }
        }
        let slot = count % capacity
        write {
            firstFrames[slot].store(frames.lowerBound, ordering: .relaxed)
            endFrames[slot].store(frames.upperBound, ordering: .relaxed)
            startInstants[slot].store(instant, ordering: .relaxed)
            recorded.store(count + 1, ordering: .relaxed)
        }
        return true
    }

    /// The frames heard by `instant`: the latest run begun by then, up to where it has played; nil when nothing was
    /// recorded. Before every recorded run begins, the first one's first frame. Any thread.
    func heardFrames(by instant: UInt64) -> Int? {
        while true {
            let before = sequence.load(ordering: .acquiring)
            let heard = readHeardFrames(by: instant)
            atomicMemoryFence(ordering: .acquiring)
            if before & 1 == 0, sequence.load(ordering: .relaxed) == before {
                return heard
            }
        }
    }

    private func readHeardFrames(by instant: UInt64) -> Int? {
        let count = recorded.load(ordering: .relaxed)
        guard count > 0 else { return nil }
        var run = count - 1
        while true {
            let slot = run % capacity
            let first = firstFrames[slot].load(ordering: .relaxed)
            let start = startInstants[slot].load(ordering: .relaxed)
            if start <= instant {
                let played = DeviceClock.frames(in: instant - start, rate: sampleRate)
                return min(endFrames[slot].load(ordering: .relaxed), first + played)
            }
            guard run > max(0, count - capacity) else { return first }
            run -= 1
        }
    }

    private func write(_ body: () -> Void) {
        let start = sequence.load(ordering: .relaxed)
        sequence.store(start + 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        body()
        sequence.store(start + 2, ordering: .releasing)
    }
}

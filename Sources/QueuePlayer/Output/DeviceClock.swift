import Dispatch
import Synchronization

/// The clock of a sink without hardware (the real-time ``NullSink``): how many of the frames it was handed a sound
/// card would have played by now. It runs at the stream's rate from an anchor (frames played at an instant), stands
/// while paused or run dry, and never counts a frame that was not handed over (`limit`).
///
/// Lock-free: the anchor is one double-width atomic, moved by compare-and-exchange, so the sink's thread, a thread
/// pausing it and any reader agree without a lock, and the sink's thread never waits on one.
final class DeviceClock: Sendable {
    /// Frames played at the anchor (`first`), and the anchor's instant in uptime nanoseconds (`second`), or 0 while
    /// the clock stands.
    private let anchor = Atomic<WordPair>(WordPair(first: 0, second: 0))
    /// The frames handed over so far: the clock stops there, as a card that has run out of frames.
    private let limit = Atomic<Int>(0)
    /// When the clock was last told to pause, in uptime nanoseconds; 0 while not paused.
    private let pausedAt = Atomic<UInt64>(0)
    /// The stream's rate, which the clock counts at.
    let sampleRate: Int

    /// A standing clock at `frames` played, counting at `sampleRate`.
    init(frames: Int, sampleRate: Int) {
        self.sampleRate = sampleRate
        anchor.store(WordPair(first: UInt(bitPattern: frames), second: 0), ordering: .releasing)
        limit.store(frames, ordering: .releasing)
    }

    /// True from ``pause()`` to ``resume()``.
    var isPaused: Bool { pausedAt.load(ordering: .acquiring) != 0 }

    /// The frames played by now (by the instant of the pause, while paused).
    func playedFrames() -> Int {
        let paused = pausedAt.load(ordering: .acquiring)
        let now = DispatchTime.now().uptimeNanoseconds
        return played(by: paused != 0 ? min(paused, now) : now, from: anchor.load(ordering: .acquiring))
    }

    /// Raises the limit to `frames` handed over in all. The sink's thread, once those frames are recorded.
    func handedOver(_ frames: Int) {
        limit.store(frames, ordering: .releasing)
    }

    /// Stands the clock where it was at this instant. Any thread.
    func pause() {
        pausedAt.store(DispatchTime.now().uptimeNanoseconds, ordering: .sequentiallyConsistent)
        stand(by: pausedAt.load(ordering: .sequentiallyConsistent))
    }

    /// Lets ``start()`` run the clock again. Any thread.
    func resume() {
        pausedAt.store(0, ordering: .sequentiallyConsistent)
    }

    /// Stands the clock now: the sink has run dry. The sink's thread.
    func stand() {
        stand(by: DispatchTime.now().uptimeNanoseconds)
    }

    /// Runs a standing clock from now, unless it is paused; returns the anchor it runs from (nil: paused). The sink's
    /// thread, before it renders.
    func start() -> (frames: Int, nanoseconds: UInt64)? {
        var current = anchor.load(ordering: .acquiring)
        while current.second == 0 {
            guard !isPaused else { return nil }
            let started = WordPair(first: current.first, second: UInt(DispatchTime.now().uptimeNanoseconds))
            let (exchanged, found) = anchor.compareExchange(
                expected: current, desired: started, ordering: .sequentiallyConsistent)
            if exchanged {
                // A pause between the look and the exchange stands it again at the pause's instant, which precedes
                // the start: no frame counts as played.
                if isPaused {
                    stand(by: pausedAt.load(ordering: .sequentiallyConsistent))
                    return nil
                }
                current = started
                break
            }
            current = found
        }
        return (Int(bitPattern: current.first), UInt64(current.second))
    }

    /// Whole frames played in `nanoseconds` at `rate`, without overflow for any uptime.
    static func frames(in nanoseconds: UInt64, rate: Int) -> Int {
        let rate = UInt64(rate)
        return Int((nanoseconds / 1_000_000_000) * rate + (nanoseconds % 1_000_000_000) * rate / 1_000_000_000)
    }

    /// The nanoseconds that `frames` take to play at `rate`, without overflow for any uptime.
    static func nanoseconds(for frames: Int, rate: Int) -> UInt64 {
        let frames = UInt64(max(0, frames))
        let rate = UInt64(rate)
        return (frames / rate) * 1_000_000_000 + (frames % rate) * 1_000_000_000 / rate
    }

    private func stand(by instant: UInt64) {
        var current = anchor.load(ordering: .acquiring)
        while current.second != 0 {
            let stood = WordPair(first: UInt(bitPattern: played(by: instant, from: current)), second: 0)
            let (exchanged, found) = anchor.compareExchange(
                expected: current, desired: stood, ordering: .sequentiallyConsistent)
            if exchanged { return }
            current = found
        }
    }

    private func played(by instant: UInt64, from anchor: WordPair) -> Int {
        let frames = Int(bitPattern: anchor.first)
        let since = UInt64(anchor.second)
        guard since != 0, instant > since else { return frames }
        return min(limit.load(ordering: .acquiring), frames + Self.frames(in: instant - since, rate: sampleRate))
    }
}

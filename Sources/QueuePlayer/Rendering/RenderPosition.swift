import Synchronization

/// Where rendering stands, published by the render thread and read consistently by any other thread.
///
/// A sequence lock: the single writer (the render thread) bumps the sequence to odd, stores the fields and bumps it
/// to even; a reader retries until it sees the same even sequence on both sides of its loads. The writer never
/// waits, allocates or locks, so publishing is safe on the audio callback path.
final class RenderPosition: Sendable {
    /// One consistent reading.
    struct Reading: Equatable, Sendable {
        /// Frames handed to the sink so far, silence included.
        var sinkFrames = 0
        /// Ring frames consumed so far (the ring's read index in frames).
        var ringFrames = 0
        /// The value of `sinkFrames` just after the last ring frame was handed to the sink.
        var sinkFramesAtLastRingFrame = 0

        /// The ring frame being heard when the sink still holds `latencyFrames` unplayed frames.
        func audibleRingFrame(latencyFrames: Int) -> Int {
            let heard = sinkFrames - max(0, latencyFrames)
            let behind = max(0, sinkFramesAtLastRingFrame - heard)
            return max(0, ringFrames - behind)
        }
    }

    private let sequence = Atomic<Int>(0)
    private let sinkFrames = Atomic<Int>(0)
    private let ringFrames = Atomic<Int>(0)
    private let sinkFramesAtLastRingFrame = Atomic<Int>(0)

    /// Publishes a new position. Render thread only.
    func publish(_ reading: Reading) {
        let start = sequence.load(ordering: .relaxed)
        sequence.store(start + 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        sinkFrames.store(reading.sinkFrames, ordering: .relaxed)
        ringFrames.store(reading.ringFrames, ordering: .relaxed)
        sinkFramesAtLastRingFrame.store(reading.sinkFramesAtLastRingFrame, ordering: .relaxed)
        sequence.store(start + 2, ordering: .releasing)
    }

    /// The last position published, read without tearing. Any thread.
    func read() -> Reading {
        while true {
            let before = sequence.load(ordering: .acquiring)
            let reading = Reading(
                sinkFrames: sinkFrames.load(ordering: .relaxed),
                ringFrames: ringFrames.load(ordering: .relaxed),
                sinkFramesAtLastRingFrame: sinkFramesAtLastRingFrame.load(ordering: .relaxed))
            atomicMemoryFence(ordering: .acquiring)
            if before & 1 == 0, sequence.load(ordering: .relaxed) == before {
                return reading
            }
        }
    }
}

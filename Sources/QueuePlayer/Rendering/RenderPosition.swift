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
        /// The ring frame just past the last one handed to the sink: `ringFrames`, but for what a discard's skip
        /// passed over since.
        var ringFramesHanded = 0

        /// The ring frame being heard when the sink still holds `latencyFrames` unplayed frames.
        func audibleRingFrame(latencyFrames: Int) -> Int {
            ringFrame(from: ringFrames, notHeard: latencyFrames)
        }

        /// The ring frame heard through when the sink threw away, unheard, the last `droppedFrames` frames handed to
        /// it (a flush): counted from the last frame handed over, which a discard taken up since does not move.
        func ringFrameHeard(droppedFrames: Int) -> Int {
            ringFrame(from: ringFramesHanded, notHeard: droppedFrames)
        }

        /// `ringFrame`, the ring frame of sink frame `sinkFramesAtLastRingFrame`, moved back to where the sink
        /// stands with `notHeard` frames handed over and not heard (silence after the last ring frame counts none).
        private func ringFrame(from ringFrame: Int, notHeard: Int) -> Int {
            let heard = sinkFrames - max(0, notHeard)
            let behind = max(0, sinkFramesAtLastRingFrame - heard)
            return max(0, ringFrame - behind)
        }
    }

    private let sequence = Atomic<Int>(0)
    private let sinkFrames = Atomic<Int>(0)
    private let ringFrames = Atomic<Int>(0)
    private let sinkFramesAtLastRingFrame = Atomic<Int>(0)
    private let ringFramesHanded = Atomic<Int>(0)

    /// Publishes a new position. Render thread only.
    func publish(_ reading: Reading) {
        let start = sequence.load(ordering: .relaxed)
        sequence.store(start + 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        sinkFrames.store(reading.sinkFrames, ordering: .relaxed)
        ringFrames.store(reading.ringFrames, ordering: .relaxed)
        sinkFramesAtLastRingFrame.store(reading.sinkFramesAtLastRingFrame, ordering: .relaxed)
        ringFramesHanded.store(reading.ringFramesHanded, ordering: .relaxed)
        sequence.store(start + 2, ordering: .releasing)
    }

    /// The last position published, read without tearing. Any thread.
    func read() -> Reading {
        while true {
            let before = sequence.load(ordering: .acquiring)
            let reading = Reading(
                sinkFrames: sinkFrames.load(ordering: .relaxed),
                ringFrames: ringFrames.load(ordering: .relaxed),
                sinkFramesAtLastRingFrame: sinkFramesAtLastRingFrame.load(ordering: .relaxed),
                ringFramesHanded: ringFramesHanded.load(ordering: .relaxed))
            atomicMemoryFence(ordering: .acquiring)
            if before & 1 == 0, sequence.load(ordering: .relaxed) == before {
                return reading
            }
        }
    }
}

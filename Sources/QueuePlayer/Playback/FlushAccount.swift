/// How a restart that continues its item past what was heard counted what its flush dropped: the figures a skip or
/// a repeat heard at such a restart comes from. Kept by ``PlaybackEngine/lastFlushAccount``.
package struct FlushAccount: Sendable, Equatable, CustomStringConvertible {
    /// The ring frame the new audio continues.
    package var continuedFrame: Int
    /// The ring frame estimated as heard before the flush, from the sink's latency.
    package var estimatedHeardFrame: Int
    /// What the sink counted as dropped by its flush, in frames; nil when it could not tell (the estimate stood).
    package var droppedFrames: Int?
    /// The ring frame heard through by that count, which replaced the estimate; nil when there was none.
    package var heardFrame: Int?
    /// Frames handed to the sink before the flush, silence included.
    package var sinkFrames: Int
    /// The value of ``sinkFrames`` just after the last ring frame was handed over.
    package var sinkFramesAtLastRingFrame: Int
    /// The ring frame just past the last one handed over.
    package var ringFramesHanded: Int

    package var description: String {
        "flush continuing ring frame \(continuedFrame): estimated heard \(estimatedHeardFrame), dropped "
            + "\(droppedFrames.map(String.init) ?? "unknown"), heard \(heardFrame.map(String.init) ?? "unknown"); "
            + "sink frames \(sinkFrames), at the last ring frame \(sinkFramesAtLastRingFrame), "
            + "ring frames handed \(ringFramesHanded)"
    }
}

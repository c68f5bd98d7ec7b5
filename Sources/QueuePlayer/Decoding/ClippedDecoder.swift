import FoundationEssentials

/// Presents a part of another decoder's item as if it were the whole item: frame 0 is the part's first frame, and
/// the item ends where the part does (a gapless join to what follows, as at any item's end). Lengths, seeks and
/// stream marks count from the part's start, at the source's rate.
///
/// A part that starts past the item's end is empty: the item ends at once. A source that cannot be sought in (a
/// remote file whose server does not answer `Range` requests) is decoded up to the part's start and that is dropped.
///
/// Threading: as `AudioDecoder`, one thread at a time; the decoding thread, never an audio callback.
package final class ClippedDecoder: AudioDecoder {
    package var url: URL { source.url }
    package var format: AudioFormat { source.format }
    /// The part's length in frames: to the source's end when the part is open-ended or runs past it.
    package let frameCount: Int
    package var metadata: ItemMetadata { source.metadata }
    /// Always false: a live stream has no parts.
    package var isLive: Bool { false }
    package var isSeekable: Bool { source.isSeekable }
    package var forwardBuffer: ForwardBuffer? { source.forwardBuffer }
    package var estimatedDataRate: Int? { source.estimatedDataRate }

    private let source: any AudioDecoder
    /// The source frame the part starts at.
    private let startFrame: Int
    private var framesDelivered = 0

    /// The part `range` of `source`'s item (a live stream's cannot be taken: it has no times to cut at), positioned
    /// at the part's start.
    package init(_ source: any AudioDecoder, range: MediaTimeRange) throws(DecoderError) {
        precondition(!source.isLive, "a live stream has no parts")
        let rate = Double(source.format.sampleRate)
        let start = min(source.frameCount, Self.frame(range.start, rate: rate) ?? 0)
        let end = Self.frame(range.end, rate: rate).map { min($0, source.frameCount) } ?? source.frameCount
        self.source = source
        startFrame = start
        frameCount = max(0, end - start)
        try skipToStart()
    }

    /// `time` as a frame at `rate`, rounded to the nearest; nil when it is not a number (an open end).
    private static func frame(_ time: MediaTime, rate: Double) -> Int? {
        guard time.isNumeric else { return nil }
        return max(0, Int((time.seconds * rate).rounded()))
    }

    private func skipToStart() throws(DecoderError) {
        guard startFrame > 0 else { return }
        if source.isSeekable { return try source.seek(toFrame: startFrame) }
        var skipped = 0
        while skipped < startFrame {
            var scratch = [Float](repeating: 0, count: min(4096, startFrame - skipped) * source.format.channelCount)
            var span = scratch.mutableSpan
            let frames = try source.decode(into: &span)
            guard frames > 0 else { return }
            skipped += frames
        }
    }

    /// Decodes into the front of `destination`; 0 once the part's frames are all given. The last call may decode
    /// past the part's end into `destination`: only the part's frames are counted.
    package func decode(into destination: inout MutableSpan<Float>) throws(DecoderError) -> Int {
        let remaining = frameCount - framesDelivered
        guard remaining > 0 else { return 0 }
        let frames = min(remaining, try source.decode(into: &destination))
        framesDelivered += frames
        return frames
    }

    package func seek(toFrame frame: Int) throws(DecoderError) {
        guard (0...frameCount).contains(frame) else {
            throw DecoderError(
                .seekOutOfRange, url: url, reason: "frame \(frame) is outside the part played, 0...\(frameCount)",
                suggestion: "Seek to a time within the item's playback range")
        }
        try source.seek(toFrame: startFrame + frame)
        framesDelivered = frame
    }

    package func applyReplayGain(_ gain: AppliedReplayGain) {
        source.applyReplayGain(gain)
    }

    /// The source's marks, their frames counted from the part's start (a mark before it applies from its start).
    package func takeStreamMarks() -> [StreamMark] {
        source.takeStreamMarks().map { mark in
            StreamMark(frame: max(0, mark.frame - startFrame), kind: mark.kind)
        }
    }
}

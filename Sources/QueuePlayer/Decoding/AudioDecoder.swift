import FoundationEssentials

/// Turns one item into interleaved stereo Float32 frames.
///
/// Contract:
/// - After a successful `init`, ``format``, ``frameCount`` and ``metadata`` are final and exact: the frame count is
///   known before the first frame is decoded, and it excludes encoder delay and padding (gapless).
/// - ``decode(into:)`` fills the front of the span with whole frames and returns how many; 0 means the item ended.
/// - Decoding may block on file I/O. Call it from a decoding thread, never from an audio callback.
///
/// Threading: an instance is used by one thread at a time and is not `Sendable`; hand it over, do not share it.
package protocol AudioDecoder: AnyObject {
    /// The file being decoded.
    var url: URL { get }
    /// The layout of the frames ``decode(into:)`` produces; always stereo.
    var format: AudioFormat { get }
    /// The exact number of frames in the item; `Int.max` for a live stream (``isLive``), which has no end.
    var frameCount: Int { get }
    /// True for a live stream (a radio station): no length, no end, no seeking.
    var isLive: Bool { get }
    /// The item's tags.
    var metadata: ItemMetadata { get }
    /// False when a seek cannot be carried out: a live stream, or a remote file whose server does not answer
    /// `Range` requests (a seek would mean fetching it again from its start).
    var isSeekable: Bool { get }
    /// A remote item's forward buffer (what has arrived ahead of the decoder); nil for a local file, whose bytes
    /// are always there.
    var forwardBuffer: ForwardBuffer? { get }
    /// The bit rate of the encoded audio, in bits a second; nil when not known.
    var estimatedDataRate: Int? { get }
    /// Decodes frames into the front of `destination` (interleaved, `format.channelCount` samples a frame) and
    /// returns how many frames were written; 0 at the end of the item. Throws ``DecoderError`` with code
    /// ``DecoderError/Code/truncated`` once, at the end, when the file stopped short of what it announced.
    func decode(into destination: inout MutableSpan<Float>) throws(DecoderError) -> Int
    /// Moves so that the next frame decoded is `frame` (0-based, sample-exact).
    func seek(toFrame frame: Int) throws(DecoderError)
    /// Applies `gain` to the frames decoded from now on (none, until told).
    func applyReplayGain(_ gain: AppliedReplayGain)
    /// Takes what the stream's server marked in the frames decoded so far (an ICY title, a gap where a live
    /// stream reconnected), each with the item frame it applies from, oldest first.
    func takeStreamMarks() -> [StreamMark]
}

/// Something that applies from a frame of a remote item on, told when that frame is heard: a stream's new title
/// (ICY), or a gap where a live stream was reconnected at its live edge and what it sent meanwhile was missed.
///
/// A value type, safe to pass between threads.
package struct StreamMark: Sendable, Equatable {
    /// What the mark says.
    package enum Kind: Sendable, Equatable {
        /// The item's metadata from the mark on.
        case metadata(ItemMetadata)
        /// The audio before the mark and after it are this many seconds apart in the stream: it was missed.
        case gap(seconds: Double)
    }

    /// The item frame (at the decoder's rate) from which it applies.
    package var frame: Int
    package var kind: Kind
}

extension AudioDecoder {
    /// What the decoder knows of its item (format, exact length, tags), labelled as `entry`. Any thread that owns
    /// the decoder.
    package func info(for entry: QueueEntry) -> OpenedEntry {
        var info = OpenedEntry(
            entry: entry, format: format, frameCount: frameCount, metadata: metadata, isLive: isLive,
            isSeekable: isSeekable)
        info.estimatedDataRate = estimatedDataRate
        return info
    }

    /// A local file can always be sought in.
    package var isSeekable: Bool { true }

    /// Not known, unless the decoder tells it.
    package var estimatedDataRate: Int? { nil }

    /// A decoder that reads no ReplayGain tags plays as decoded.
    package func applyReplayGain(_ gain: AppliedReplayGain) {}
}

extension AudioDecoder {
    /// Decodes once (``decode(into:)``) into the contiguous free space of `renderer`'s ring, at most
    /// `maximumFrames`, and publishes what was written (keeping an end-of-stream mark when `holdingEndOfStream`; see
    /// ``Renderer``'s `write`). Returns the frames written, 0 at the end of the item. The renderer's producer thread
    /// only.
    func write(
        into renderer: Renderer, maximumFrames: Int = .max, holdingEndOfStream: Bool = false
    ) throws(DecoderError) -> Int {
        var failure: DecoderError?
        let frames = renderer.write(maximumFrames: maximumFrames, holdingEndOfStream: holdingEndOfStream) { span in
            do throws(DecoderError) {
                return try decode(into: &span)
            } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        return frames
    }
}

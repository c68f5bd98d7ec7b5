import CSoxr
import FoundationEssentials

/// Presents another decoder's item at a different sample rate, resampled by libsoxr (its 16-bit recipe,
/// `SOXR_16_BITQ`: linear phase, passband to 91% of the lower Nyquist frequency, and a precision matched to the
/// 16-bit stream every sink plays; see ``Recipe``).
///
/// Lets every item play through one output stream at the sound server's rate, so that items of different rates
/// join without closing and reopening the stream. Frames, lengths and seeks count at the output rate: the item is
/// `round(sourceFrames × outputRate / sourceRate)` frames long, and a seek to frame `f` seeks the source to
/// `round(f × sourceRate / outputRate)` and starts the resampler afresh (its filter then starts from silence, as it
/// does at the item's start: a seek is no join).
///
/// Threading: as `AudioDecoder`, one thread at a time; the decoding thread, never an audio callback.
///
/// Safety: the only unsafe pointers are the soxr handle, owned by this object and deleted in `deinit`, and the
/// addresses of this object's own scratch buffer and of the destination span, which are passed to `soxr_process`
/// only for the length of that call.
package final class ResampledDecoder: AudioDecoder {
    package var url: URL { source.url }
    /// Stereo at the output rate.
    package let format: AudioFormat
    /// The source's length, scaled to the output rate.
    package let frameCount: Int
    package var metadata: ItemMetadata { source.metadata }
    /// True when the source is a live stream.
    package var isLive: Bool { source.isLive }
    /// Whether the source can be sought in.
    package var isSeekable: Bool { source.isSeekable }
    /// The source's forward buffer.
    package var forwardBuffer: ForwardBuffer? { source.forwardBuffer }
    package var estimatedDataRate: Int? { source.estimatedDataRate }

    /// The source's marks, their frames counted at the output rate.
    package func takeStreamMarks() -> [StreamMark] {
        source.takeStreamMarks().map { mark in
            StreamMark(
                frame: Self.scale(mark.frame, from: sourceFormat.sampleRate, to: format.sampleRate), kind: mark.kind)
        }
    }
    /// The rate of the frames the source decodes.
    package let sourceFormat: AudioFormat

    private let source: any AudioDecoder
    private let resampler: soxr_t
    /// Source frames decoded and not yet taken by the resampler: `input[inputOffset...]`, `inputCount` frames.
    private var input: [Float]
    private var inputOffset = 0
    private var inputCount = 0
    private var sourceEnded = false
    /// The error the source ended with, thrown once the resampler has given out what it held.
    private var sourceFailure: DecoderError?
    private var framesDelivered = 0

    /// Source frames the resampler is given at a time.
    private static let inputChunkFrames = 4096

    /// libsoxr's quality recipes, by the precision of their filters.
    enum Recipe {
        /// `SOXR_16_BITQ`, the default: its noise and aliasing stay below what a 16-bit stream can carry, with a
        /// shorter filter than ``twentyBit``'s.
        case sixteenBit
        /// `SOXR_HQ` (`SOXR_20_BITQ`): 20-bit precision, finer than a 16-bit stream can carry.
        case twentyBit

        var soxrRecipe: UInt {
            switch self {
            case .sixteenBit: UInt(SOXR_16_BITQ)
            case .twentyBit: UInt(SOXR_20_BITQ)
            }
        }
    }

    /// Wraps `source` to play at `outputRate`. Throws ``DecoderError/Code/libraryFailure`` (naming the item) when
    /// libsoxr cannot make a resampler for the two rates.
    package convenience init(_ source: any AudioDecoder, outputRate: Int) throws(DecoderError) {
        try self.init(source, outputRate: outputRate, recipe: .sixteenBit)
    }

    /// Wraps `source` to play at `outputRate`, resampled with `recipe`.
    init(_ source: any AudioDecoder, outputRate: Int, recipe: Recipe) throws(DecoderError) {
        precondition(outputRate > 0, "an output rate must be positive")
        self.source = source
        sourceFormat = source.format
        format = AudioFormat(sampleRate: outputRate, channelCount: source.format.channelCount)
        frameCount =
            source.isLive ? .max : Self.scale(source.frameCount, from: source.format.sampleRate, to: outputRate)
        input = [Float](repeating: 0, count: Self.inputChunkFrames * source.format.channelCount)
        var error: soxr_error_t?
        var quality = soxr_quality_spec(recipe.soxrRecipe, 0)
        var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var runtime = soxr_runtime_spec(1)
        let created = soxr_create(
            Double(source.format.sampleRate), Double(outputRate), UInt32(source.format.channelCount), &error, &io,
            &quality, &runtime)
        guard let created, error == nil else {
            if let created { soxr_delete(created) }
            throw DecoderError(
                .libraryFailure, url: source.url,
                reason: "libsoxr cannot resample \(source.format) to \(outputRate) Hz: \(Self.message(error))",
                suggestion: "Report it with the file; other items still play")
        }
        resampler = created
    }

    deinit {
        soxr_delete(resampler)
    }

    /// `frames` at `sourceRate` counted at `targetRate`, rounded to the nearest frame.
    static func scale(_ frames: Int, from sourceRate: Int, to targetRate: Int) -> Int {
        Int((Int64(frames) * Int64(targetRate) + Int64(sourceRate / 2)) / Int64(sourceRate))
    }

    /// Resamples into the front of `destination`; 0 at the end, after the resampler has given out its tail. The
    /// source's error at its end (a truncated file) is thrown after that tail.
    package func decode(into destination: inout MutableSpan<Float>) throws(DecoderError) -> Int {
        let channels = format.channelCount
        let wanted = min(destination.count / channels, frameCount - framesDelivered)
        var written = 0
        while written < wanted {
            if inputCount == 0, !sourceEnded { refillInput() }
            var taken = 0
            var produced = 0
            let status = input.withUnsafeBufferPointer { inputBuffer in
                destination.withUnsafeMutableBufferPointer { output in
                    // A nil input tells the resampler the signal has ended: it then gives out what it holds.
                    let inputStart = inputCount > 0 ? inputBuffer.baseAddress! + inputOffset * channels : nil
                    return soxr_process(
                        resampler, inputStart, inputCount, &taken, output.baseAddress! + written * channels,
                        wanted - written, &produced)
                }
            }
            if let status {
                throw DecoderError(
                    .decodingFailed, url: url, reason: "libsoxr failed: \(Self.message(status))",
                    suggestion: "Report it with the file; other items still play")
            }
            inputOffset += taken
            inputCount -= taken
            written += produced
            if sourceEnded, inputCount == 0, produced == 0 { break }
        }
        framesDelivered += written
        if written == 0, let failure = sourceFailure {
            sourceFailure = nil
            throw failure
        }
        return written
    }

    /// The source applies it.
    package func applyReplayGain(_ gain: AppliedReplayGain) {
        source.applyReplayGain(gain)
    }

    /// Seeks the source to the frame nearest `frame`'s time and starts the resampler afresh.
    package func seek(toFrame frame: Int) throws(DecoderError) {
        guard (0...frameCount).contains(frame) else {
            throw DecoderError(
                .seekOutOfRange, url: url, reason: "frame \(frame) is outside 0...\(frameCount)",
                suggestion: "Seek to a time within the item's duration")
        }
        let sourceFrame = Self.scale(frame, from: format.sampleRate, to: sourceFormat.sampleRate)
        try source.seek(toFrame: min(sourceFrame, source.frameCount))
        _ = soxr_clear(resampler)
        inputOffset = 0
        inputCount = 0
        sourceEnded = false
        sourceFailure = nil
        framesDelivered = frame
    }

    /// Decodes the next chunk of the source; at its end (or its error) marks the input ended.
    private func refillInput() {
        do throws(DecoderError) {
            inputCount = try input.withUnsafeMutableBufferPointer { buffer throws(DecoderError) -> Int in
                var span = buffer.mutableSpan
                return try source.decode(into: &span)
            }
        } catch {
            sourceFailure = error
            inputCount = 0
        }
        inputOffset = 0
        if inputCount == 0 { sourceEnded = true }
    }

    private static func message(_ error: soxr_error_t?) -> String {
        error.map { String(cString: $0) } ?? "unknown error"
    }
}

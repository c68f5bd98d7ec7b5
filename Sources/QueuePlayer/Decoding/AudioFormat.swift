/// The PCM layout of decoded audio: frames per second and interleaved channels per frame.
///
/// A value type, safe to pass between threads.
public struct AudioFormat: Hashable, Sendable, CustomStringConvertible {
    /// Frames per second, such as 44,100 or 48,000.
    public var sampleRate: Int
    /// Interleaved samples per frame. Decoders in this package always deliver 2 (stereo).
    public var channelCount: Int

    /// Creates a format. Both values must be positive.
    public init(sampleRate: Int, channelCount: Int) {
        precondition(sampleRate > 0 && channelCount > 0, "an audio format needs a positive rate and channel count")
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }

    /// Stereo at the given rate: the layout every decoder in this package produces.
    public static func stereo(sampleRate: Int) -> AudioFormat {
        AudioFormat(sampleRate: sampleRate, channelCount: 2)
    }

    /// Seconds of audio in `frames` frames of this format.
    public func seconds(forFrames frames: Int) -> Double {
        Double(frames) / Double(sampleRate)
    }

    public var description: String {
        "\(sampleRate) Hz, \(channelCount == 2 ? "stereo" : "\(channelCount) channels")"
    }
}

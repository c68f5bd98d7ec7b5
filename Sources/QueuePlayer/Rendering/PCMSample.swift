/// A sample type a sink can take from the ``Renderer``: Float32 as decoded, or signed 16-bit.
///
/// Conversions are pure and allocation-free, so they are safe on the audio callback path.
public protocol PCMSample: BitwiseCopyable, Sendable {
    /// The value of digital silence.
    static var silence: Self { get }
    /// Converts a decoded sample in [-1, 1).
    init(decoded: Float)
}

extension Float: PCMSample {
    /// 0.
    public static var silence: Float { 0 }
    @inline(__always) public init(decoded: Float) { self = decoded }
}

extension Int16: PCMSample {
    /// 0.
    public static var silence: Int16 { 0 }
    /// Rounds `decoded × 32768` half to even and clamps, exactly as libmpg123 makes its own 16-bit output, so the
    /// 16-bit stream equals `mpg123 -w`'s bit for bit.
    @inline(__always) public init(decoded: Float) {
        let scaled = (decoded * 32768).rounded(.toNearestOrEven)
        self = scaled >= 32767 ? .max : (scaled <= -32768 ? .min : Int16(scaled))
    }
}

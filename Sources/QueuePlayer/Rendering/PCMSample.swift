/// A sample type a sink can take from the `Renderer`: Float32 as decoded, or signed 16-bit.
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
    /// 16-bit stream equals `mpg123 -w`'s bit for bit. A NaN becomes `.max` instead of trapping.
    ///
    /// Written so that a loop of conversions vectorises: `rounded(.toNearestOrEven)` is a call to libm's `rintf` on
    /// baseline x86-64, one per sample (a fifth of the render thread's CPU). The value is clamped first (rounding
    /// commutes with a clamp to integer bounds), then 1.5 × 2^23 is added: in [2^23, 2^24) a Float's unit in the
    /// last place is 1, so the addition itself rounds half to even, and the integer is the low bits of the sum.
    @inline(__always) public init(decoded: Float) {
        var scaled = decoded * 32768
        scaled = scaled < 32767 ? scaled : 32767
        scaled = scaled > -32768 ? scaled : -32768
        let biased = Int32(bitPattern: (scaled + Self.roundingBias).bitPattern)
        self = Int16(truncatingIfNeeded: biased &- Int32(bitPattern: Self.roundingBias.bitPattern))
    }

    /// 1.5 × 2^23: see ``init(decoded:)``.
    @usableFromInline static let roundingBias: Float = 12_582_912
}

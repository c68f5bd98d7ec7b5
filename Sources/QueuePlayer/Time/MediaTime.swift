/// A point or span on a media timeline, as a rational number of seconds: `value / timescale`, like Core Media's
/// `CMTime`. Besides numeric times it represents "invalid" (no time), "indefinite" (not known yet, such as the
/// duration of an item not yet opened) and the two infinities.
///
/// A value type, safe to pass between threads. Equality and ordering compare the rational values exactly:
/// `MediaTime(value: 1, timescale: 2) == MediaTime(value: 22_050, timescale: 44_100)`. The order of non-numeric times
/// is Core Media's: −∞ < every numeric time < indefinite < +∞ < invalid.
public struct MediaTime: Sendable, CustomStringConvertible {
    /// What kind of time this is.
    public enum Kind: Int, Sendable, Hashable {
        // Raw values give Core Media's order of the non-numeric kinds around the numeric ones.
        /// Less than every other time.
        case negativeInfinity = 0
        /// An exact `value / timescale` seconds.
        case numeric = 1
        /// Valid but unknown (a duration not known yet).
        case indefinite = 2
        /// Greater than every numeric and indefinite time.
        case positiveInfinity = 3
        /// No time at all; greater than every other time, equal to other invalid times.
        case invalid = 4
    }

    /// The numerator; meaningful only for numeric times.
    public let value: Int64
    /// Units per second (the denominator); positive for numeric times.
    public let timescale: Int32
    /// What kind of time this is.
    public let kind: Kind
    /// True when an operation had to round to fit the result into its timescale.
    public let hasBeenRounded: Bool

    /// The time `value / timescale` seconds. A timescale of 0 or less gives ``invalid``.
    public init(value: Int64, timescale: Int32) {
        self.init(value: value, timescale: timescale, kind: timescale > 0 ? .numeric : .invalid, rounded: false)
    }

    /// The time nearest to `seconds` in units of `1 / preferredTimescale` (half away from zero). NaN gives
    /// ``invalid``; infinities give the matching infinity; a value beyond `Int64` gives the infinity of its sign.
    public init(seconds: Double, preferredTimescale: Int32) {
        guard preferredTimescale > 0, !seconds.isNaN else {
            self = .invalid
            return
        }
        let scaled = (seconds * Double(preferredTimescale)).rounded(.toNearestOrAwayFromZero)
        guard scaled.isFinite, let value = Int64(exactly: scaled) else {
            self = seconds < 0 ? .negativeInfinity : .positiveInfinity
            return
        }
        self.init(
            value: value, timescale: preferredTimescale, kind: .numeric,
            rounded: scaled != seconds * Double(preferredTimescale))
    }

    init(value: Int64, timescale: Int32, kind: Kind, rounded: Bool) {
        self.value = kind == .numeric ? value : 0
        self.timescale = kind == .numeric ? timescale : 0
        self.kind = kind
        self.hasBeenRounded = rounded
    }

    /// 0 seconds.
    public static let zero = MediaTime(value: 0, timescale: 1)
    /// No time.
    public static let invalid = MediaTime(value: 0, timescale: 0, kind: .invalid, rounded: false)
    /// A valid time that is not known yet.
    public static let indefinite = MediaTime(value: 0, timescale: 0, kind: .indefinite, rounded: false)
    /// Later than every numeric time.
    public static let positiveInfinity = MediaTime(value: 0, timescale: 0, kind: .positiveInfinity, rounded: false)
    /// Earlier than every numeric time.
    public static let negativeInfinity = MediaTime(value: 0, timescale: 0, kind: .negativeInfinity, rounded: false)

    /// False only for ``invalid``.
    public var isValid: Bool { kind != .invalid }
    /// True for ``indefinite``.
    public var isIndefinite: Bool { kind == .indefinite }
    /// True for an exact `value / timescale`.
    public var isNumeric: Bool { kind == .numeric }

    /// The time in seconds: exact up to `Double` precision for numeric times, ±infinity for the infinities, and NaN
    /// for invalid and indefinite times.
    public var seconds: Double {
        switch kind {
        case .numeric: Double(value) / Double(timescale)
        case .positiveInfinity: .infinity
        case .negativeInfinity: -.infinity
        case .indefinite, .invalid: .nan
        }
    }

    /// The same time in units of `1 / newTimescale`, rounding half away from zero when it does not divide exactly
    /// (the result then has ``hasBeenRounded`` set). Non-numeric times and a timescale of 0 or less are returned as
    /// they are, or as ``invalid``.
    public func convertScale(_ newTimescale: Int32) -> MediaTime {
        guard kind == .numeric else { return self }
        guard newTimescale > 0 else { return .invalid }
        guard newTimescale != timescale else { return self }
        let (quotient, exact) = Self.scale(value, by: Int64(newTimescale), dividedBy: Int64(timescale))
        guard let quotient else { return value < 0 ? .negativeInfinity : .positiveInfinity }
        return MediaTime(value: quotient, timescale: newTimescale, kind: .numeric, rounded: hasBeenRounded || !exact)
    }

    /// `value × multiplier / divisor`, rounded half away from zero, computed in 128 bits; nil when it does not fit
    /// in `Int64`. Also says whether the division was exact.
    static func scale(_ value: Int64, by multiplier: Int64, dividedBy divisor: Int64) -> (Int64?, exact: Bool) {
        let product = value.multipliedFullWidth(by: multiplier)
        let magnitude = Int128(product.high) << 64 | Int128(product.low)
        let divisor = Int128(divisor)
        var (quotient, remainder) = magnitude.quotientAndRemainder(dividingBy: divisor)
        if remainder.magnitude * 2 >= divisor.magnitude {
            quotient += (magnitude < 0) == (divisor < 0) ? 1 : -1
        }
        return (Int64(exactly: quotient), remainder == 0)
    }

    public var description: String {
        switch kind {
        case .numeric: "\(seconds) s (\(value)/\(timescale))"
        case .positiveInfinity: "+infinity"
        case .negativeInfinity: "-infinity"
        case .indefinite: "indefinite"
        case .invalid: "invalid"
        }
    }
}

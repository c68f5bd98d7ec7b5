extension MediaTime {
    /// The sum, as Core Media adds: invalid if either is invalid or the infinities are opposite; an infinity if
    /// either is one; indefinite if either is; otherwise exact in the least common timescale (or, when that exceeds
    /// `Int32`, in the larger timescale, rounded). A sum beyond `Int64` is the infinity of its sign.
    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        switch (lhs.kind, rhs.kind) {
        case (.invalid, _), (_, .invalid), (.positiveInfinity, .negativeInfinity),
            (.negativeInfinity, .positiveInfinity):
            return .invalid
        case (.positiveInfinity, _), (_, .positiveInfinity):
            return .positiveInfinity
        case (.negativeInfinity, _), (_, .negativeInfinity):
            return .negativeInfinity
        case (.indefinite, _), (_, .indefinite):
            return .indefinite
        case (.numeric, .numeric):
            return numericSum(lhs, rhs)
        }
    }

    /// The difference: `lhs + (-rhs)`.
    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        lhs + -rhs
    }

    /// The negation: numeric values change sign, the infinities swap, indefinite and invalid stay.
    public static prefix func - (time: MediaTime) -> MediaTime {
        switch time.kind {
        case .numeric:
            guard time.value != .min else { return .positiveInfinity }
            return MediaTime(
                value: -time.value, timescale: time.timescale, kind: .numeric, rounded: time.hasBeenRounded)
        case .positiveInfinity: return .negativeInfinity
        case .negativeInfinity: return .positiveInfinity
        case .indefinite, .invalid: return time
        }
    }

    /// The time `multiplier` times as long, in the same timescale. Numeric overflow gives the infinity of the
    /// product's sign; an infinity times 0 is invalid.
    public static func * (time: MediaTime, multiplier: Int64) -> MediaTime {
        switch time.kind {
        case .numeric:
            let (product, overflow) = time.value.multipliedReportingOverflow(by: multiplier)
            guard !overflow else {
                return (time.value < 0) != (multiplier < 0) ? .negativeInfinity : .positiveInfinity
            }
            return MediaTime(value: product, timescale: time.timescale, kind: .numeric, rounded: time.hasBeenRounded)
        case .positiveInfinity, .negativeInfinity:
            if multiplier == 0 { return .invalid }
            return multiplier < 0 ? -time : time
        case .indefinite, .invalid:
            return time
        }
    }

    private static func numericSum(_ lhs: MediaTime, _ rhs: MediaTime) -> MediaTime {
        let gcd = Int64(greatestCommonDivisor(UInt64(lhs.timescale), UInt64(rhs.timescale)))
        let leastCommon = Int64(lhs.timescale) / gcd * Int64(rhs.timescale)
        let timescale = leastCommon <= Int64(Int32.max) ? Int32(leastCommon) : max(lhs.timescale, rhs.timescale)
        let left = lhs.convertScale(timescale)
        let right = rhs.convertScale(timescale)
        guard left.isNumeric, right.isNumeric else { return left + right }
        let (sum, overflow) = left.value.addingReportingOverflow(right.value)
        guard !overflow else { return left.value < 0 ? .negativeInfinity : .positiveInfinity }
        return MediaTime(
            value: sum, timescale: timescale, kind: .numeric,
            rounded: left.hasBeenRounded || right.hasBeenRounded)
    }
}

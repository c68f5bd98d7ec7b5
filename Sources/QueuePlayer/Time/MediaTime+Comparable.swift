extension MediaTime: Comparable, Hashable {
    /// Equal when both are the same non-numeric kind, or both numeric with the same rational value.
    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool {
        compare(lhs, rhs) == 0
    }

    /// Core Media's order: −∞ < numeric (by value) < indefinite < +∞ < invalid.
    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// Hashes the reduced fraction, so that equal times hash alike.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        guard kind == .numeric else { return }
        let divisor = Self.greatestCommonDivisor(value.magnitude, UInt64(timescale))
        hasher.combine(value / Int64(divisor))
        hasher.combine(Int64(timescale) / Int64(divisor))
    }

    /// -1, 0 or 1; exact for numeric times (cross-multiplied in 128 bits).
    static func compare(_ lhs: MediaTime, _ rhs: MediaTime) -> Int {
        guard lhs.kind == .numeric, rhs.kind == .numeric else {
            return lhs.kind.rawValue == rhs.kind.rawValue ? 0 : (lhs.kind.rawValue < rhs.kind.rawValue ? -1 : 1)
        }
        let left = lhs.value.multipliedFullWidth(by: Int64(rhs.timescale))
        let right = rhs.value.multipliedFullWidth(by: Int64(lhs.timescale))
        let a = Int128(left.high) << 64 | Int128(left.low)
        let b = Int128(right.high) << 64 | Int128(right.low)
        return a == b ? 0 : (a < b ? -1 : 1)
    }

    static func greatestCommonDivisor(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return max(a, 1)
    }
}

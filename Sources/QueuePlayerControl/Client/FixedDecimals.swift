/// `value` with exactly `places` decimals (`12.345678`), as C's `%f` prints it; FoundationEssentials has no
/// `String(format:)`.
package func fixedDecimals(_ value: Double, places: Int) -> String {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    // Beyond 64 bits of fixed point (and for infinities and NaN), as Swift prints it.
    guard value.isFinite, abs(value) * scale < 0x1p63 else { return "\(value)" }
    let scaled = Int64((abs(value) * scale).rounded())
    let unit = Int64(scale)
    let fraction = String(scaled % unit)
    let padded = String(repeating: "0", count: max(0, places - fraction.count)) + fraction
    let sign = value < 0 && scaled != 0 ? "-" : ""
    return places > 0 ? "\(sign)\(scaled / unit).\(padded)" : "\(sign)\(scaled)"
}

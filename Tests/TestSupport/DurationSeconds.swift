extension Duration {
    /// The duration in seconds, fractions included (`components.seconds` alone drops them).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

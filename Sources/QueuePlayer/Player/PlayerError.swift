/// A request a ``QueuePlayer`` refuses, with a message that says what to do instead.
public struct PlayerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was refused.
    public enum Code: Equatable, Sendable {
        /// A rate other than 0 (paused) and 1 (playing).
        case unsupportedRate
    }

    /// What was refused.
    public let code: Code
    /// A sentence naming the request and what to do.
    public let description: String

    /// A rate other than 0 and 1.
    static func unsupportedRate(_ rate: Float) -> PlayerError {
        PlayerError(
            code: .unsupportedRate,
            description: "rate \(rate) is not supported: QueuePlayer plays at 0 (paused) or 1 (playing); "
                + "the rate stays as it was")
    }
}

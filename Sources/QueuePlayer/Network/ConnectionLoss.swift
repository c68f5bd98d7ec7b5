/// What a remote item waits for while its server sends nothing: the server, why the last attempt failed, and when
/// the player asks again. AVFoundation says only that a player waits to minimize stalls; this says what for.
///
/// Read as ``PlayerItem/connectionLoss``, and observed as `\.currentItem?.connectionLoss` on its player. A value type,
/// safe to pass between threads.
public struct ConnectionLoss: Sendable, Hashable, CustomStringConvertible {
    /// The server asked: its host, with the port when the URL names one ("radio.example.org",
    /// "127.0.0.1:8000").
    public let server: String
    /// Why the last attempt failed, in words: "connection refused", "cannot resolve the host name", "the server
    /// answered 503 Service Unavailable", "nothing received for 10 s".
    public let reason: String
    /// The attempts that failed since the loss began (the item's first request, or its last byte).
    public let failedAttempts: Int
    /// How long the player waits after the last failure before it asks again: from 0.1 s, doubling to 2 s.
    public let nextAttemptIn: Duration

    /// Describes a loss of the server `server` (host, and port if named).
    public init(server: String, reason: String, failedAttempts: Int, nextAttemptIn: Duration) {
        self.server = server
        self.reason = reason
        self.failedAttempts = failedAttempts
        self.nextAttemptIn = nextAttemptIn
    }

    /// "reconnecting to HOST: REASON, next try in 2 s" (tenths of a second under 1 s).
    public var description: String {
        let seconds =
            Double(nextAttemptIn.components.seconds)
            + Double(nextAttemptIn.components.attoseconds) / 1e18
        let wait = seconds < 1 ? "\((seconds * 10).rounded() / 10)" : "\(Int(seconds.rounded()))"
        return "reconnecting to \(server): \(reason), next try in \(wait) s"
    }
}

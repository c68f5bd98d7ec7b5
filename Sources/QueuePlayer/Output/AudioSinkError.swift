/// Why audio output failed, naming the server or device and what to do.
///
/// A value type, safe to pass between threads. Compare by ``code``; new codes may be added.
public struct AudioSinkError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure. Extensible: switch with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: Hashable, Sendable { case serverUnreachable, streamFailed, serverDisconnected }
        private let kind: Kind

        /// No sound server answered at the address tried.
        public static let serverUnreachable = Code(kind: .serverUnreachable)
        /// The server refused or dropped the playback stream.
        public static let streamFailed = Code(kind: .streamFailed)
        /// The server went away during playback.
        public static let serverDisconnected = Code(kind: .serverDisconnected)

        public var description: String { String(describing: kind) }
    }

    /// The kind of failure.
    public let code: Code
    /// What happened, naming the address or stream.
    public let reason: String
    /// What the user can do about it.
    public let suggestion: String

    /// Creates an error.
    public init(_ code: Code, reason: String, suggestion: String) {
        self.code = code
        self.reason = reason
        self.suggestion = suggestion
    }

    public var description: String { "\(reason). \(suggestion)" }
}

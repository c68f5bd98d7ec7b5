import FoundationEssentials

/// Why an item could not be opened or decoded, naming the file and what the user can do about it.
///
/// A value type, safe to pass between threads. Compare errors by ``code``; new codes may be added.
public struct DecoderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure. Extensible: switch with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: Hashable, Sendable {
            case fileNotFound, unreadable, empty, notMPEGAudio, truncated, decodingFailed, seekOutOfRange
            case libraryFailure, networkFailure, serverRefused, interrupted
        }

        private let kind: Kind

        /// There is no file at the path.
        public static let fileNotFound = Code(kind: .fileNotFound)
        /// The file exists but cannot be read (permissions, a directory, an I/O error).
        public static let unreadable = Code(kind: .unreadable)
        /// The file has no bytes.
        public static let empty = Code(kind: .empty)
        /// The file holds no MPEG audio frames that libmpg123 recognises.
        public static let notMPEGAudio = Code(kind: .notMPEGAudio)
        /// The file ends before its last frame or before the length its header announces.
        public static let truncated = Code(kind: .truncated)
        /// libmpg123 reported an error while decoding.
        public static let decodingFailed = Code(kind: .decodingFailed)
        /// A seek asked for a frame outside the item.
        public static let seekOutOfRange = Code(kind: .seekOutOfRange)
        /// libmpg123 itself could not be set up (out of memory, unsupported build).
        public static let libraryFailure = Code(kind: .libraryFailure)
        /// A remote item's server could not be reached (name lookup, connection, TLS), or its connection was lost
        /// and did not come back.
        public static let networkFailure = Code(kind: .networkFailure)
        /// A remote item's server answered with an error status (404, 500, ...).
        public static let serverRefused = Code(kind: .serverRefused)
        /// A wait for a remote item's bytes was cut short because the player needed its decoding thread; the
        /// player opens the item again. Never reported as an item's failure.
        static let interrupted = Code(kind: .interrupted)

        public var description: String { String(describing: kind) }
    }

    /// The kind of failure.
    public let code: Code
    /// The file, or the remote item's `http` or `https` URL, that the failure concerns.
    public let url: URL
    /// What went wrong, in words, including what libmpg123 said where it said something.
    public let reason: String
    /// What the user can do about it.
    public let suggestion: String

    init(_ code: Code, url: URL, reason: String, suggestion: String) {
        self.code = code
        self.url = url
        self.reason = reason
        self.suggestion = suggestion
    }

    public var description: String { "\(url.itemLocation): \(reason). \(suggestion)" }
}

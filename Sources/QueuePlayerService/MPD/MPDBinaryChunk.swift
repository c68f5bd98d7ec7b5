import Synchronization

/// A connection's binary answers (`albumart`, `readpicture`): the chunk a command leaves to be sent after its text
/// lines, and the most bytes a chunk holds (MPD's `binarylimit`).
///
/// Threading: any thread; a connection runs its commands one at a time.
final class MPDBinaryChunk: Sendable {
    /// MPD's default chunk size.
    static let defaultLimit = 8192
    /// The smallest limit MPD allows.
    static let smallestLimit = 64

    private let state = Mutex<(limit: Int, pending: [UInt8]?)>((defaultLimit, nil))

    /// The most bytes a chunk holds now.
    var limit: Int { state.withLock { $0.limit } }

    /// MPD's `binarylimit SIZE`.
    func setLimit(_ text: String) throws(MPDError) -> String {
        let limit = try MPDArguments.unsigned(text)
        guard limit >= Self.smallestLimit else { throw MPDError(.argument, "Value too small") }
        state.withLock { $0.limit = limit }
        return ""
    }

    /// Leaves the part of `bytes` from `offset` that a chunk holds to be sent after the command's text.
    func stage(_ bytes: [UInt8], from offset: Int) {
        state.withLock { state in
            state.pending = Array(bytes[offset..<min(bytes.count, offset + state.limit)])
        }
    }

    /// The chunk left to send, once.
    func take() -> [UInt8]? {
        state.withLock { state in
            defer { state.pending = nil }
            return state.pending
        }
    }

    /// Forgets a chunk left by a command that then failed.
    func discard() { _ = take() }
}

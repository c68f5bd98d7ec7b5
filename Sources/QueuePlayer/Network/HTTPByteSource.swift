import FoundationEssentials
import Glibc

/// An item at an `http` or `https` URL, read as a ``ByteSource`` while ``HTTPDownload`` fetches it into an
/// ``HTTPBuffer``.
///
/// A read that finds no bytes waits on the decoder context's semaphore until the download delivers, ends or gives
/// up, or until the context is interrupted (then it fails with ``DecoderError/Code/interrupted``). A seek within
/// what is held, or a little ahead of it, only moves the position; one elsewhere starts a new download there with a
/// `Range` request (or, from a server that ignores ranges, from the start, skipping up to it).
///
/// Why the raw pointers are safe: a read copies out of the buffer's array under its lock, within the bytes it holds,
/// into the `count` bytes the caller gave. Threading: the decoding thread that owns the decoder (libmpg123 calls it
/// there); not `Sendable`. The download runs as a task of its own and is cancelled when this source is released.
final class HTTPByteSource: ByteSource {
    /// The forward buffer's size: a minute of a 128 kbps stream, a bound for an endless one.
    static let capacityBytes = 1 << 20
    /// A forward seek at most this far past what has arrived waits for it rather than starting a new request.
    static let readAheadBytes = 256 << 10

    let url: URL
    /// What the response's head said: its length and whether it answers ranges.
    private(set) var head = HTTPBuffer.Head(length: nil, acceptsRanges: false)
    private(set) var failure: DecoderError?
    /// The body's length from the response's head; nil with `errno` ESPIPE for a stream that has none.
    var length: Int? {
        if head.length == nil { errno = ESPIPE }
        return head.length
    }
    /// How much has arrived ahead of the decoder.
    var forwardBuffer: ForwardBuffer { buffer.gauge }
    /// The item's bytes the buffer holds now.
    var heldBytes: Range<Int> { buffer.state.withLock { $0.start..<$0.end } }
    private let buffer: HTTPBuffer
    private let context: DecoderContext
    private var download: Task<Void, Never>?
    private var position = 0

    /// Requests `url` and waits for the answer's head. Throws the ``DecoderError`` that names the URL when the host
    /// cannot be reached or the server refuses, and ``DecoderError/Code/interrupted`` when `context` is interrupted.
    init(url: URL, context: DecoderContext) throws(DecoderError) {
        self.url = url
        self.context = context
        buffer = HTTPBuffer(capacity: Self.capacityBytes, wake: context.wake)
        download = HTTPDownload.start(url: url, at: 0, generation: 0, into: buffer, context: context)
        var head: HTTPBuffer.Head?
        var failure: DecoderError?
        try waitForBuffer { state in
            (head, failure) = (state.head, state.failure)
            return head != nil || failure != nil
        }
        if let failure { throw failure }
        self.head = head!
    }

    deinit {
        download?.cancel()
        buffer.cancel()
    }

    func read(into destination: UnsafeMutableRawPointer, count: Int) -> Int {
        guard count > 0 else { return 0 }
        var copied = 0
        var restarts = false
        do throws(DecoderError) {
            try waitForBuffer { state in
                if position >= state.start, position < state.end {
                    copied = min(count, state.end - position)
                    state.bytes.withUnsafeBytes { bytes in
                        destination.copyMemory(from: bytes.baseAddress! + (position - state.start), byteCount: copied)
                    }
                    state.consumed = position + copied
                    return true
                }
                if let length = state.head?.length, position >= length { return true }
                if state.isComplete, position >= state.end { return true }
                failure = state.failure
                restarts = position < state.start || position > state.end + Self.readAheadBytes
                return restarts || failure != nil
            }
        } catch {
            failure = error
        }
        if failure != nil { return -1 }
        if restarts {
            startDownload(at: position)
            return read(into: destination, count: count)
        }
        position += copied
        buffer.resumeDownloadIfRoom()
        return copied
    }

    func takeTitles(through offset: Int) -> [String] {
        buffer.state.withLock { state in Self.take(&state.titles) { $0.offset <= offset }.map(\.title) }
    }

    func takeGaps(through offset: Int) -> [Double] {
        buffer.state.withLock { state in Self.take(&state.gaps) { $0.offset <= offset }.map(\.seconds) }
    }

    /// Removes and returns the leading marks of `marks` that are `due`.
    private static func take<Mark>(_ marks: inout [Mark], while due: (Mark) -> Bool) -> [Mark] {
        let count = marks.prefix(while: due).count
        defer { marks.removeFirst(count) }
        return Array(marks.prefix(count))
    }

    func seek(to offset: Int, whence: Int32) -> Int {
        let target = seekTarget(offset: offset, whence: whence, from: position)
        if target >= 0 { position = target }
        return target
    }

    /// Replaces the download with one from `offset`.
    private func startDownload(at offset: Int) {
        download?.cancel()
        let generation = buffer.restart(at: offset)
        download = HTTPDownload.start(url: url, at: offset, generation: generation, into: buffer, context: context)
    }

    /// Runs `isDone` under the buffer's lock until it returns true, waiting for the download in between. Throws
    /// ``DecoderError/Code/interrupted`` when the context is interrupted first.
    private func waitForBuffer(until isDone: (inout HTTPBuffer.State) -> Bool) throws(DecoderError) {
        while true {
            let done = buffer.state.withLock { state in
                if isDone(&state) { return true }
                state.readerWaits = true
                return false
            }
            if done { return }
            if context.isInterrupted() {
                throw DecoderError(
                    .interrupted, url: url, reason: "the player moved on while waiting for the server",
                    suggestion: "Nothing to do")
            }
            context.waitForBytes()
        }
    }
}

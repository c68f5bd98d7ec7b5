import Dispatch
import NIOCore
import Synchronization

/// The bounded byte buffer between an item's download and its decoder: the forward buffer of a remote item.
///
/// The download (an async task, ``HTTPDownload``) appends what arrives and waits for room once ``capacity`` bytes
/// are unread, which stops reading from the socket (async-http-client's backpressure), so an endless stream never
/// grows memory. The decoder (``HTTPByteSource``, on the decoding thread) copies out and waits on the context's
/// semaphore when nothing is there; the download signals it only when the decoder said it waits, so a fast download
/// does not pile up wake-ups. Each download carries the ``State/generation`` it was started for: a decoder that
/// moves elsewhere starts a new generation, and what an older download still delivers is dropped.
///
/// Threading: every method may be called from any thread or task; the state is behind one `Mutex`.
final class HTTPBuffer: Sendable {
    /// What a response's head told about the item.
    struct Head: Sendable, Equatable {
        /// The item's whole length in bytes; nil for a body of unknown length (a live stream).
        var length: Int?
        /// Whether the server answers `Range` requests (`Accept-Ranges: bytes`, or a 206 answer).
        var acceptsRanges: Bool
        /// The station's name (`icy-name`), for a stream that has one.
        var stationName: String?

        /// A live stream (a radio station): no length, and not a file that could be asked for in ranges. It has no
        /// end: when its body ends, it is asked for again, at its live edge.
        var isLive: Bool { length == nil && !acceptsRanges }
    }

    /// The buffer and what is known of the download, for the two sides to read and change under the lock.
    struct State {
        var generation = 0
        /// The item offset of `bytes[0]`.
        var start = 0
        var bytes: [UInt8] = []
        /// The offset up to which the decoder has read; bytes before it may be dropped to make room.
        var consumed = 0
        var head: Head?
        /// Each ICY `StreamTitle` received and the item offset of the first byte it applies to, oldest first; the
        /// decoder takes them as it decodes past them.
        var titles: [(offset: Int, title: String)] = []
        /// Each gap in a live stream (the seconds it was away before a reconnection) and the item offset of the
        /// first byte after it, oldest first.
        var gaps: [(offset: Int, seconds: Double)] = []
        /// The body ended where the item ends.
        var isComplete = false
        var failure: DecoderError?
        var isCancelled = false
        /// The decoder waits for bytes: the next delivery signals the semaphore.
        var readerWaits = false
        var roomWaiter: CheckedContinuation<Void, Never>?

        /// The item offset just past the last byte held.
        var end: Int { start + bytes.count }
        /// Bytes held that the decoder has not read.
        var unread: Int { end - max(consumed, start) }

        /// What the item's ``ForwardBuffer`` is told, for a buffer of `capacity` bytes.
        func reading(capacity: Int) -> ForwardBuffer.Reading {
            let isFinal = isComplete || failure != nil || head?.length.map { end >= $0 } == true
            return ForwardBuffer.Reading(
                held: start..<end, unread: unread, isFinal: isFinal, isFull: roomWaiter != nil || unread >= capacity)
        }

        /// Clears the decoder's wait and says whether the semaphore must be signalled.
        mutating func takeReaderWait() -> Bool {
            defer { readerWaits = false }
            return readerWaits
        }
    }

    /// The most unread bytes held before the download waits: a minute of a 128 kbps stream.
    let capacity: Int
    let state = Mutex(State())
    /// How much is held, in the terms players and items read.
    let gauge: ForwardBuffer
    private let wake: DispatchSemaphore

    init(capacity: Int, wake: DispatchSemaphore) {
        self.capacity = capacity
        self.wake = wake
        gauge = ForwardBuffer(capacity: capacity)
    }

    /// The download of `generation` read its response's head.
    func receivedHead(_ head: Head, generation: Int) {
        update(generation: generation) { $0.head = head }
    }

    /// The download of `generation` received an ICY `title` that applies from item offset `offset` on.
    func receivedTitle(_ title: String, at offset: Int, generation: Int) {
        update(generation: generation) { $0.titles.append((offset, title)) }
    }

    /// The download of `generation` reconnected to a live stream whose bytes from item offset `offset` on follow
    /// `seconds` it missed.
    func receivedGap(seconds: Double, at offset: Int, generation: Int) {
        update(generation: generation) { $0.gaps.append((offset, seconds)) }
    }

    /// The download of `generation` gave up: the decoder's next read fails with `failure`.
    func failed(_ failure: DecoderError, generation: Int) {
        update(generation: generation) { $0.failure = failure }
    }

    /// The download of `generation` received the item's last byte.
    func completed(generation: Int) {
        update(generation: generation) { $0.isComplete = true }
    }

    /// Appends `chunk`, first waiting for room while ``capacity`` bytes are unread. False when the download must
    /// stop: its generation was replaced, or the decoder is gone.
    func append(_ chunk: ByteBuffer, generation: Int) async -> Bool {
        while true {
            let (outcome, wakesReader) = state.withLock { state -> (Bool?, Bool) in
                guard state.generation == generation, !state.isCancelled else { return (false, false) }
                if state.bytes.count + chunk.readableBytes > capacity, state.consumed > state.start {
                    let dropped = min(state.consumed - state.start, state.bytes.count)
                    state.bytes.removeFirst(dropped)
                    state.start += dropped
                }
                guard state.unread < capacity else { return (nil, false) }
                state.bytes.append(contentsOf: chunk.readableBytesView)
                return (true, state.takeReaderWait())
            }
            if wakesReader { wake.signal() }
            if outcome == true { publish() }
            if let outcome { return outcome }
            await waitForRoom(generation: generation)
        }
    }

    /// Starts generation after the current one at item offset `offset`, emptying the buffer, and returns its number.
    func restart(at offset: Int) -> Int {
        let (generation, waiter) = state.withLock { state in
            state.generation += 1
            state.start = offset
            state.consumed = offset
            state.bytes.removeAll(keepingCapacity: true)
            state.isComplete = false
            state.failure = nil
            defer { state.roomWaiter = nil }
            return (state.generation, state.roomWaiter)
        }
        waiter?.resume()
        publish()
        return generation
    }

    /// The decoder is gone: every download stops.
    func cancel() {
        let waiter = state.withLock { state in
            state.isCancelled = true
            defer { state.roomWaiter = nil }
            return state.roomWaiter
        }
        waiter?.resume()
    }

    /// Lets a waiting download go on if the decoder's reading made room, and tells the gauge what is left. Called by
    /// the decoder after it read.
    func resumeDownloadIfRoom() {
        defer { publish() }
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.unread < capacity else { return nil }
            defer { state.roomWaiter = nil }
            return state.roomWaiter
        }
        waiter?.resume()
    }

    private func waitForRoom(generation: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let goesOn = state.withLock { state in
                guard state.generation == generation, !state.isCancelled, state.unread >= capacity else { return true }
                state.roomWaiter = continuation
                return false
            }
            if goesOn {
                continuation.resume()
            } else {
                publish()
            }
        }
    }

    /// Tells the gauge what the buffer holds now; when its flags change, the decoder's semaphore is signalled too,
    /// for an engine that waits to have enough buffered.
    private func publish() {
        if gauge.record(state.withLock { $0.reading(capacity: capacity) }) { wake.signal() }
    }

    private func update(generation: Int, _ change: (inout State) -> Void) {
        let wakesReader = state.withLock { state in
            guard state.generation == generation else { return false }
            change(&state)
            return state.takeReaderWait()
        }
        if wakesReader { wake.signal() }
        publish()
    }
}

import Synchronization

/// How much of a remote item has arrived ahead of its decoder, as its player and its ``PlayerItem`` read it: the
/// measure behind waiting to minimize stalls, and behind the item's buffering properties.
///
/// The item's ``HTTPBuffer`` records a ``Reading`` after every change; the decoder gives the byte rate that turns
/// bytes into time once it knows it. Threading: any thread; the state is behind one `Mutex`. The change handler runs
/// on the thread that recorded the change (the download's event loop, or the decoding thread), outside the lock.
package final class ForwardBuffer: Sendable {
    /// What the buffer holds, in the item's byte offsets (audio bytes: ICY metadata is already taken out).
    package struct Reading: Sendable, Equatable {
        /// The bytes held, read or not.
        package var held: Range<Int> = 0..<0
        /// The bytes held that the decoder has not read.
        package var unread = 0
        /// Nothing more will arrive for the position being read: the item's last byte is held, or the download
        /// gave up (the decoder will fail on its own).
        package var isFinal = false
        /// The download waits for the decoder to make room: the buffer is full.
        package var isFull = false
    }

    /// The flags that observers are told about when they change.
    package struct Flags: Sendable, Equatable {
        package var isLikelyToKeepUp = false
        package var isEmpty = true
        package var isFull = false
    }

    /// The forward buffer waited for when an item does not say (``PlayerItem/preferredForwardBufferDuration`` 0).
    package static let defaultTargetSeconds = 2.0

    private struct State {
        var reading = Reading()
        /// Audio bytes per second of the item, once its decoder knows it.
        var bytesPerSecond: Double?
        /// The item offset of the first audio frame, for turning offsets into times.
        var audioStart = 0
        var targetSeconds = ForwardBuffer.defaultTargetSeconds
        /// Audio already decoded ahead of what is heard, which counts toward the target.
        var decodedAheadSeconds = 0.0
        var capacity: Int
        var told = Flags()
        var changeHandler: (@Sendable () -> Void)?

        /// What is still wanted of the target in bytes, beyond what is decoded ahead: at most half the buffer,
        /// which must be able to hold it.
        var targetBytes: Int {
            guard let bytesPerSecond else { return capacity / 2 }
            let seconds = max(0, targetSeconds - decodedAheadSeconds)
            return min(capacity / 2, Int((seconds * bytesPerSecond).rounded(.up)))
        }

        var flags: Flags {
            Flags(
                isLikelyToKeepUp: reading.isFinal || reading.unread >= targetBytes,
                isEmpty: reading.unread == 0 && !reading.isFinal, isFull: reading.isFull)
        }

        /// The change handler, when the flags differ from those last told (which they become).
        mutating func takeChange() -> (@Sendable () -> Void)? {
            let now = flags
            guard now != told else { return nil }
            told = now
            return changeHandler
        }
    }

    private let state: Mutex<State>

    /// A gauge for a buffer of `capacity` bytes, empty.
    init(capacity: Int) {
        state = Mutex(State(capacity: capacity))
    }

    /// Records what the buffer holds now, and tells the change handler if a flag changed; returns whether one did.
    @discardableResult
    func record(_ reading: Reading) -> Bool {
        let (changed, handler) = state.withLock { state in
            state.reading = reading
            let now = state.flags
            return (now != state.told, state.takeChange())
        }
        handler?()
        return changed
    }

    /// Sets the item's byte rate and where its audio starts, so that bytes can be read as time.
    func setByteRate(_ bytesPerSecond: Double, audioStart: Int) {
        guard bytesPerSecond > 0 else { return }
        let handler = state.withLock { state -> (@Sendable () -> Void)? in
            state.bytesPerSecond = bytesPerSecond
            state.audioStart = audioStart
            return state.takeChange()
        }
        handler?()
    }

    /// The item's audio in bytes a second, once the decoder has told it.
    var byteRate: Double? { state.withLock(\.bytesPerSecond) }

    /// The forward buffer to wait for before playing, in seconds; 0 or less means ``defaultTargetSeconds``.
    package func setTarget(seconds: Double) {
        let handler = state.withLock { state -> (@Sendable () -> Void)? in
            state.targetSeconds = seconds > 0 ? seconds : Self.defaultTargetSeconds
            return state.takeChange()
        }
        handler?()
    }

    /// Called after each change of ``flags``, on the thread that made it; replaces any earlier handler.
    package func onChange(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.changeHandler = handler }
    }

    /// Whether enough is held to play on, whether the buffer is empty, and whether it is full.
    package var flags: Flags { state.withLock(\.flags) }

    /// Notes how much of the item is decoded ahead of what is heard: it counts toward the target.
    package func noteDecodedAhead(seconds: Double) {
        let handler = state.withLock { state -> (@Sendable () -> Void)? in
            state.decodedAheadSeconds = seconds
            return state.takeChange()
        }
        handler?()
    }

    /// True when enough is held to play: the target (`waitsForTarget`), or any unread byte (not); or nothing more
    /// will arrive.
    package func isReady(waitsForTarget: Bool) -> Bool {
        state.withLock { state in
            waitsForTarget ? state.flags.isLikelyToKeepUp : state.reading.isFinal || state.reading.unread > 0
        }
    }

    /// The item times held, as AVFoundation's `loadedTimeRanges`: one range in seconds, or none before the byte
    /// rate is known.
    package var loadedSeconds: Range<Double>? {
        state.withLock { state in
            guard let rate = state.bytesPerSecond, !state.reading.held.isEmpty else { return nil }
            let start = Double(max(0, state.reading.held.lowerBound - state.audioStart)) / rate
            let end = Double(max(0, state.reading.held.upperBound - state.audioStart)) / rate
            return start..<max(start, end)
        }
    }
}

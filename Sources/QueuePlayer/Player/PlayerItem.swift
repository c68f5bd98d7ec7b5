import FoundationEssentials
import Synchronization

/// One file to play in a ``QueuePlayer``, like AVFoundation's `AVPlayerItem`.
///
/// An item is a reference: the same item can be queued once at a time (``QueuePlayer/canInsert(_:after:)``).
/// Its ``status`` goes from `.unknown` to `.readyToPlay` when the player opens the file (format, exact length and
/// tags known), or to `.failed` with the error that names the file. Every property is safe to read from any thread.
public final class PlayerItem: Sendable, Hashable, CustomStringConvertible {
    /// Whether the item can be played.
    public enum Status: Sendable, Equatable {
        /// Not opened yet.
        case unknown
        /// Opened; ``PlayerItem/duration`` and ``PlayerItem/metadata`` are known.
        case readyToPlay
        /// Could not be opened or decoded to its end.
        case failed(DecoderError)
    }

    /// Where the item is: a file's path, or a remote item's whole URL (an item keeps text rather than a `URL`, as
    /// ``QueueEntry`` does).
    public let location: String
    private let state = Mutex(State())

    private struct State {
        var opening = Opening.unopened
        var elapsed = MediaTime.zero
        var preferredForwardBufferDuration = 0.0
        /// A remote item's forward buffer, once a player opened it.
        var forwardBuffer: ForwardBuffer?
        var startTime = MediaTime.zero
        /// The player this item is current in, for a live ``PlayerItem/currentTime()``.
        weak var player: QueuePlayer?
        private var boxedLoss: BoxedLoss?

        var connectionLoss: ConnectionLoss? {
            get { if case .loss(let loss) = boxedLoss { loss } else { nil } }
            set { boxedLoss = newValue.map(BoxedLoss.loss) }
        }
    }

    /// A remote item's connection loss. Indirect, so every other item (most of a long queue) carries one pointer
    /// instead of the loss's sixty-odd bytes.
    private indirect enum BoxedLoss {
        case loss(ConnectionLoss)
    }

    /// What opening the file found. Indirect, so an item not yet opened (most of a long queue) carries one pointer
    /// instead of the information's hundred-odd bytes.
    private indirect enum Opening {
        case unopened
        case ready(OpenedEntry)
        /// Failed; the information stays if the file was opened before the failure (a decoding error later on).
        case failed(DecoderError, OpenedEntry?)

        var status: Status {
            switch self {
            case .unopened: .unknown
            case .ready: .readyToPlay
            case .failed(let error, _): .failed(error)
            }
        }

        var info: OpenedEntry? { read { $0 } }

        /// `field` of what opening found, nil before: reads one field where ``info`` would copy all of them (every
        /// tag, retained and released again), which a snapshot of the player asks for several times.
        func read<Field>(_ field: (OpenedEntry) -> Field) -> Field? {
            switch self {
            case .unopened: nil
            case .ready(let info): field(info)
            case .failed(_, let info): info.map { field($0) }
            }
        }
    }

    /// Creates an item for a local file, or for an MP3 file on a server (an `http` or `https` URL: a podcast
    /// episode). Nothing is read until a player opens it.
    public convenience init(url: URL) {
        self.init(location: url.itemLocation)
    }

    /// Creates an item for what `location` names: a file's path, or an `http` or `https` URL. Nothing is read until
    /// a player opens it.
    public init(location: String) {
        self.location = location
    }

    /// A new item for the same location, with this one's buffering preference: what a repeat mode queues.
    func repetition() -> PlayerItem {
        let repetition = PlayerItem(location: location)
        repetition.preferredForwardBufferDuration = preferredForwardBufferDuration
        return repetition
    }

    /// Opens the item at `url` as a player would, and closes it: throws the error that names the file or URL and
    /// what to do when it is missing, unreadable, unreachable or not MPEG audio. Any thread; it reads the item's
    /// first frames (for a remote item, it waits for the server, and asks one that cannot be reached again for up to
    /// 10 s).
    public static func checkPlayable(_ url: URL) throws(DecoderError) {
        try MPG123Decoder.check(url)
    }

    /// The item, as a URL made from ``location`` on each call: a file URL, or the remote item's URL.
    public var url: URL { URL(itemLocation: location) }

    /// `.unknown`, then `.readyToPlay` or `.failed(error)`.
    public var status: Status { state.withLock { $0.opening.status } }

    /// The exact length, in the item's sample rate; ``MediaTime/indefinite`` until the item is ready, and for a live
    /// stream (a radio station), which has no length, as AVFoundation has it.
    public var duration: MediaTime {
        state.withLock { state in
            state.opening.read { info in
                guard !info.isLive else { return MediaTime.indefinite }
                return MediaTime(value: Int64(info.frameCount), timescale: Int32(info.format.sampleRate))
            } ?? .indefinite
        }
    }

    /// The format the item decodes to once it is ready: its sample rate, and two channels (every item is decoded to
    /// stereo 32-bit floating point); nil until then. Any thread.
    public var format: AudioFormat? { state.withLock { $0.opening.read { $0.format } } }

    /// The bit rate of the item's encoded audio once it is ready, in bits a second, as `AVAssetTrack`'s
    /// `estimatedDataRate` gives it: a constant bit rate file's rate, a variable one's mean over its length, a live
    /// stream's first frame's; nil until then, or when the stream tells none. Any thread.
    public var estimatedDataRate: Int? { state.withLock { $0.opening.read { $0.estimatedDataRate } ?? nil } }

    /// True once the item is ready and turned out to be a live stream (a radio station): its ``duration`` is
    /// ``MediaTime/indefinite``, it has no end, and a seek in it is refused.
    public var isLive: Bool { state.withLock { $0.opening.read { $0.isLive } ?? false } }

    /// The times a seek can reach, as AVFoundation's `seekableTimeRanges`: the whole item once it is ready; none
    /// for a live stream, or a remote file whose server does not answer `Range` requests (a seek in it is refused).
    /// Before the item is ready, none is known (a seek then cues the item, as for any item not opened yet).
    public var seekableTimeRanges: [MediaTimeRange] {
        guard isKnownToSeek else { return [] }
        return [MediaTimeRange(start: .zero, duration: duration)]
    }

    /// True once the item is ready and can be sought in.
    private var isKnownToSeek: Bool { state.withLock { $0.opening.read { $0.isSeekable } ?? false } }

    /// True once the item is ready and turned out not to be seekable: a seek in it is refused.
    var refusesSeeks: Bool { state.withLock { $0.opening.read { !$0.isSeekable } ?? false } }

    /// The tags; empty until the item is ready.
    public var metadata: ItemMetadata { state.withLock { $0.opening.read { $0.metadata } ?? ItemMetadata() } }

    // MARK: Buffering

    /// How much of a remote item, in seconds, the player wants buffered ahead before it plays (with
    /// ``QueuePlayer/automaticallyWaitsToMinimizeStalling``): 0, the default, lets the player choose, which is 2 s.
    /// At most half the forward buffer (1 MiB: 32 s of a 128 kbps stream) is waited for. Local files ignore it.
    /// Any thread; a change applies to the wait under way.
    public var preferredForwardBufferDuration: Double {
        get { state.withLock { $0.preferredForwardBufferDuration } }
        set {
            let buffer = state.withLock { state in
                state.preferredForwardBufferDuration = newValue
                return state.forwardBuffer
            }
            buffer?.setTarget(seconds: newValue)
        }
    }

    /// True when playing on is not expected to stall: a local file once ready; a remote item once its forward
    /// buffer, with what is decoded ahead, holds ``preferredForwardBufferDuration`` (or its last byte). False before
    /// the item is ready.
    /// Observable through `QueuePlayer/observe(_:queue:using:)` (`\.currentItem?.isPlaybackLikelyToKeepUp`).
    public var isPlaybackLikelyToKeepUp: Bool {
        bufferFlags?.isLikelyToKeepUp ?? (status == .readyToPlay)
    }

    /// True when a remote item's forward buffer is empty and more is to come: playing now would stall. False for a
    /// local file.
    public var isPlaybackBufferEmpty: Bool { bufferFlags?.isEmpty ?? false }

    /// True when a remote item's forward buffer is full, so its download waits for playback to make room; true for
    /// a local file once ready, which is all there.
    public var isPlaybackBufferFull: Bool { bufferFlags?.isFull ?? (status == .readyToPlay) }

    /// The times of the item held in memory, ready to play: for a remote item, the span its forward buffer holds
    /// (estimated from the stream's byte rate); for a local file once ready, the whole item. Empty before.
    public var loadedTimeRanges: [MediaTimeRange] {
        let (buffer, info) = state.withLock { ($0.forwardBuffer, $0.opening.info) }
        guard let info else { return [] }
        let scale = Int32(info.format.sampleRate)
        guard let buffer else {
            return info.isLive ? [] : [MediaTimeRange(start: .zero, duration: duration)]
        }
        return buffer.loadedSeconds.map { range in
            [
                MediaTimeRange(
                    start: MediaTime(seconds: range.lowerBound, preferredTimescale: scale),
                    duration: MediaTime(seconds: range.upperBound - range.lowerBound, preferredTimescale: scale))
            ]
        } ?? []
    }

    private var bufferFlags: ForwardBuffer.Flags? { state.withLock { $0.forwardBuffer }?.flags }

    /// Follows `buffer`, the forward buffer a player opened the item with, telling `changed` when its flags change.
    func follow(_ buffer: ForwardBuffer, changed: @escaping @Sendable () -> Void) {
        let target = state.withLock { state in
            state.forwardBuffer = buffer
            return state.preferredForwardBufferDuration
        }
        buffer.setTarget(seconds: target)
        buffer.onChange(changed)
    }

    /// The item's own time: where the player is in it while it is current, else where it was last heard (zero
    /// before it has been played). Inside an observer call in which it is the current item, the call's time.
    public func currentTime() -> MediaTime {
        if let call = ObserverCall.current, call.view?.currentItem === self { return call.time }
        let (player, elapsed) = state.withLock { ($0.player, $0.elapsed) }
        if let player, player.currentItem === self { return player.currentTime() }
        return elapsed
    }

    /// The file name (`url.lastPathComponent`), as the seed's label shows it.
    public var description: String { url.lastPathComponent }

    /// Items are equal only to themselves.
    public static func == (lhs: PlayerItem, rhs: PlayerItem) -> Bool { lhs === rhs }

    /// Hashes the identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    func markReady(_ info: OpenedEntry) {
        state.withLock { state in
            if case .failed(let error, _) = state.opening {
                state.opening = .failed(error, info)
            } else {
                state.opening = .ready(info)
            }
        }
    }

    /// The metadata heard from now on (a stream's new title) replaces what opening the item found.
    func changeMetadata(_ metadata: ItemMetadata) {
        state.withLock { state in
            guard let info = state.opening.info else { return }
            var changed = OpenedEntry(
                entry: info.entry, format: info.format, frameCount: info.frameCount, metadata: metadata,
                isLive: info.isLive, isSeekable: info.isSeekable)
            changed.estimatedDataRate = info.estimatedDataRate
            switch state.opening {
            case .failed(let error, _): state.opening = .failed(error, changed)
            default: state.opening = .ready(changed)
            }
        }
    }

    /// Where a player starts the item the next time it plays it from its start (a podcast episode resumed where it
    /// was left, as AVFoundation's seek of an item not yet playing does): zero unless set. Set it before the item is
    /// queued, or while it waits in the queue; once the item is heard from there, the player sets it back to zero,
    /// so a later play from the start (`previous`, a skip back) starts at the start. A seek, or a live stream, starts
    /// where it says instead. Any thread.
    public var startTime: MediaTime {
        get { state.withLock(\.startTime) }
        set { state.withLock { $0.startTime = newValue } }
    }

    /// While a remote item's server cannot be reached or sends nothing, and its player asks again: which server,
    /// why, and when it is asked next (after each failed attempt); nil otherwise. Any thread. While the item is
    /// queued, its player's property observers are told each change: observe
    /// `\.currentItem?.connectionLoss` (``QueuePlayer/observe(_:queue:using:)``, ``QueuePlayer/values(of:)``).
    public var connectionLoss: ConnectionLoss? { state.withLock(\.connectionLoss) }

    /// Records what the item's download says of its server; true when that changed it.
    func noteConnection(_ loss: ConnectionLoss?) -> Bool {
        state.withLock { state in
            defer { state.connectionLoss = loss }
            return state.connectionLoss != loss
        }
    }

    func markFailed(_ error: DecoderError) {
        state.withLock { $0.opening = .failed(error, $0.opening.info) }
    }

    func attach(to player: QueuePlayer?) {
        state.withLock { $0.player = player }
    }

    func noteTime(_ time: MediaTime) {
        state.withLock { $0.elapsed = time }
    }
}

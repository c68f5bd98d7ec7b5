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

    /// The file.
    public let url: URL
    private let state = Mutex(State())

    private struct State {
        var status = Status.unknown
        var info: ItemInfo?
        var elapsed = MediaTime.zero
        /// The player this item is current in, for a live ``PlayerItem/currentTime()``.
        weak var player: QueuePlayer?
    }

    /// Creates an item for a local file. Nothing is read until a player opens it.
    public init(url: URL) {
        self.url = url
    }

    /// `.unknown`, then `.readyToPlay` or `.failed(error)`.
    public var status: Status { state.withLock { $0.status } }

    /// The exact length, in the item's sample rate; ``MediaTime/indefinite`` until the item is ready.
    public var duration: MediaTime {
        state.withLock { state in
            state.info.map { MediaTime(value: Int64($0.frameCount), timescale: Int32($0.format.sampleRate)) }
                ?? .indefinite
        }
    }

    /// The tags; empty until the item is ready.
    public var metadata: ItemMetadata { state.withLock { $0.info?.metadata ?? ItemMetadata() } }

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

    func markReady(_ info: ItemInfo) {
        state.withLock { state in
            state.info = info
            if case .failed = state.status { return }
            state.status = .readyToPlay
        }
    }

    func markFailed(_ error: DecoderError) {
        state.withLock { $0.status = .failed(error) }
    }

    func attach(to player: QueuePlayer?) {
        state.withLock { $0.player = player }
    }

    func noteTime(_ time: MediaTime) {
        state.withLock { $0.elapsed = time }
    }
}

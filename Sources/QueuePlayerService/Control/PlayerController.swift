import Dispatch
import FoundationEssentials
import Logging
import QueuePlayer
import QueuePlayerControl
import Synchronization

/// Carries out control commands on a ``QueuePlayer`` (its public API, nothing else), keeps the state store current
/// (queue and history before each reply, the position while it moves), and tells subscribers what changed. The
/// control socket and MPRIS read the same snapshots, so they never disagree. After an edit of a thousand entries or
/// more, it returns the memory the edit freed (``FreedMemory``).
///
/// Reads (``snapshot()``, ``queue()``, and commands whose ``ControlCommand/isRead`` is true) write nothing and tell
/// nobody; a command that changes nothing (the same volume twice) is saved and told to nobody either. Files are
/// checked before `open`, `add` and `insert` touch the queue.
///
/// Threading: any thread or task.
package final class PlayerController: Sendable {
    let player: QueuePlayer
    let application: Application
    let store: StateStore
    let logger: Logger
    let state = Mutex(ControllerState())
    /// Held while a snapshot is taken and told, so that subscribers never get an older one after a newer one.
    let telling = Mutex(())
    /// The path every command takes, one at a time (see ``execute(_:id:ifCurrentEntry:)``).
    let commandPath: CommandPath
    /// Where subscriptions' position observers run.
    let positionQueue = DispatchQueue(label: "queueplayer.subscription-positions")

    struct ControllerState {
        var jumps = 0
        /// The queue as last written to the store.
        var savedQueue: QueueListing?
        /// The history as last written to the store.
        var savedHistory: [URL]?
        /// The position and settings as last written to the store.
        var savedCheckpoint: Checkpoint?
        /// The episode position as last written to the store.
        var savedEpisode: EpisodeCheckpoint?
        /// What feeds said of the episodes queued (or once queued), by URL.
        var episodeDetails: [String: EpisodeDetails] = [:]
        /// What subscribers were last told, and the glance taken with it.
        var told: (snapshot: PlayerSnapshot, queue: QueueListing, glance: Glance?)?
        /// The subscribers, in the order they subscribed.
        var subscribers = Registrations<Subscriber>()
        var quit: (@Sendable () -> Void)?
        /// What could not be saved at the last attempt (logged once, until a save of it succeeds again).
        var failingSaves: Set<String> = []
        /// MPD's single mode is `once`: it ends after the current item (see ``modes``).
        var singleOnce = false
        /// The tags given to queued remote items, by entry id, in the order given (see ``tag(_:name:value:)``);
        /// those of an entry no longer queued go with the next command.
        var entryTags: [Int: [EntryTag]] = [:]
    }

    /// A subscriber's ways of being told a change: what a glance shows it touched (first, at every possible change,
    /// possibly nothing), then the snapshot and the queue read with it (when either changed).
    struct Subscriber {
        var aspects: (@Sendable (PlayerAspects) -> Void)?
        var snapshot: @Sendable (PlayerSnapshot, QueueListing) -> Void
    }

    /// What the store's `player` row holds.
    struct Checkpoint: Equatable {
        var positionFrames: Int
        var positionSeconds: Double
        var volume: Float
        var holdsAtItemEnd: Bool
        var holdsOnce: Bool
        var loop: LoopStatus
        var shuffles: Bool
        var replayGain: ReplayGain
        var isPlaying: Bool
    }

    /// The current item with its entry, its tags and length read, and its position.
    struct CurrentEntry {
        var entry: QueueEntry
        var item: PlayerItem
        var time: MediaTime

        /// Seconds into the item.
        var seconds: Double { time.isNumeric ? time.seconds : 0 }
        /// The item's length in seconds; 0 while it cannot be read; nil for a live stream, which has none.
        var length: Double? { item.isLive ? nil : item.duration.isNumeric ? item.duration.seconds : 0 }
        /// False once the item is known not to be seekable (before it is opened, a seek cues it).
        var isSeekable: Bool { item.status != .readyToPlay || !item.seekableTimeRanges.isEmpty }
    }

    /// A controller of `player`, saving to `store`. `application` receives `background` and `foreground`.
    /// `commandPath` is where commands take turns (a test passes one that it observes).
    package init(
        player: QueuePlayer, application: Application, store: StateStore, logger: Logger,
        commandPath: CommandPath = CommandPath()
    ) {
        self.player = player
        self.commandPath = commandPath
        self.application = application
        self.store = store
        self.logger = logger
        // Entering or leaving the background (a signal, job control, a command) is a change subscribers see.
        application.addObserver(queue: positionQueue) { [weak self] _ in self?.broadcast() }
        // So is each attempt to reach a remote item's server while it is current: `waiting` says what is waited for.
        _ = player.observe(\.currentItem?.connectionLoss, queue: positionQueue) { [weak self] _ in self?.broadcast() }
    }

    /// Sets what `quit` does (end the service gracefully).
    package func onQuit(_ quit: @escaping @Sendable () -> Void) {
        state.withLock { $0.quit = quit }
    }

    /// Ends the service gracefully, as SIGTERM does.
    package func quit() {
        logger.info("quitting, as a client asked")
        state.withLock { $0.quit }?()
    }

    /// The queue, the current entry first.
    package func queue() -> [QueueEntry] { player.entries() }
}

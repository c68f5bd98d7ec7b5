import Dispatch
import FoundationEssentials
import Logging
import QueuePlayer
import Synchronization

/// Carries out control commands on the engine, keeps the state store current (queue and history before each reply,
/// the position while it moves), and tells subscribers what changed. The control socket and MPRIS read the same
/// snapshots, so they never disagree.
///
/// Reads (``snapshot()``, ``queue()``, and commands whose ``ControlCommand/isRead`` is true) write nothing and tell
/// nobody; a command that changes nothing (the same volume twice) is saved and told to nobody either. Files are
/// checked before `open`, `add` and `insert` touch the queue.
///
/// Threading: any thread or task.
package final class PlayerController: Sendable {
    /// How many finished or skipped items `previous` can go back through.
    package static let historyLimit = 1000

    private let engine: PlaybackEngine
    private let application: Application
    private let store: StateStore
    private let logger: Logger
    private let state = Mutex(ControllerState())
    /// Held while a snapshot is taken and told, so that subscribers never get an older one after a newer one.
    private let telling = Mutex(())

    private struct ControllerState {
        var isStopped = false
        var jumps = 0
        /// The queue as last written to the store.
        var savedQueue: [QueueEntry]?
        /// The position and settings as last written to the store.
        var savedCheckpoint: Checkpoint?
        /// What subscribers were last told.
        var told: (snapshot: PlayerSnapshot, queue: [QueueEntry])?
        /// The tags and length of an entry shown before the engine opened it (paused, cued, restored).
        var details: (entryID: Int, info: ItemInfo?)?
        var subscribers: [Int: AsyncStream<PlayerSnapshot>.Continuation] = [:]
        var nextSubscriber = 0
        var quit: (@Sendable () -> Void)?
    }

    /// What the store's `player` row holds.
    private struct Checkpoint: Equatable {
        var positionFrames: Int
        var positionSeconds: Double
        var volume: Float
        var holdsAtItemEnd: Bool
        var isPlaying: Bool
    }

    /// The item shown as current: being heard, or the one that plays next, with the frame it is at.
    private struct Shown {
        var entry: QueueEntry
        var info: ItemInfo?
        var frame: Int
        var isHeard: Bool

        var seconds: Double { info.map { $0.format.seconds(forFrames: frame) } ?? 0 }
    }

    /// A controller of `engine`, saving to `store`. `application` receives `background` and `foreground`.
    package init(engine: PlaybackEngine, application: Application, store: StateStore, logger: Logger) {
        self.engine = engine
        self.application = application
        self.store = store
        self.logger = logger
    }

    /// Queues what `store` saved, cued at the saved item and position, with the saved volume and end-of-item
    /// action; playback waits for `play`. Returns false when nothing was saved.
    package func restore() -> Bool {
        let saved: StateStore.Saved
        do {
            saved = try store.load()
        } catch {
            logger.error("cannot read the saved state in \(store.location): \(error); starting empty")
            return false
        }
        engine.volume = saved.volume
        engine.holdsAtItemEnd = saved.holdsAtItemEnd
        state.withLock { state in
            state.savedCheckpoint = Checkpoint(
                positionFrames: saved.positionFrames, positionSeconds: saved.positionSeconds, volume: saved.volume,
                holdsAtItemEnd: saved.holdsAtItemEnd, isPlaying: saved.wasPlaying)
        }
        guard let first = saved.queue.first else { return false }
        engine.enqueue(restoring: saved.queue)
        state.withLock { $0.savedQueue = saved.queue }
        if saved.positionFrames > 0 { engine.cue(startFrame: saved.positionFrames) }
        let position = fixedDecimals(saved.positionSeconds, places: 2)
        logger.info(
            "restored \(saved.queue.count) queued item(s) from \(store.location): \(first.displayName) at \(position) s"
        )
        return true
    }

    /// Writes the queue and the position to the store, where they changed since last written.
    package func saveAll() {
        saveQueue()
        checkpoint()
    }

    /// Records the position (and volume, end-of-item action, playing or not) in the store, unless that is what
    /// it already holds.
    package func checkpoint() {
        let shown = shownItem()
        let checkpoint = Checkpoint(
            positionFrames: shown?.frame ?? 0, positionSeconds: shown?.seconds ?? 0, volume: engine.volume,
            holdsAtItemEnd: engine.holdsAtItemEnd, isPlaying: engine.isPlaybackRequested)
        guard state.withLock({ $0.savedCheckpoint != checkpoint }) else { return }
        do {
            try store.checkpoint(
                positionFrames: checkpoint.positionFrames, positionSeconds: checkpoint.positionSeconds,
                volume: checkpoint.volume, holdsAtItemEnd: checkpoint.holdsAtItemEnd, isPlaying: checkpoint.isPlaying)
            state.withLock { $0.savedCheckpoint = checkpoint }
        } catch {
            logger.error("cannot save the position in \(store.location): \(error)")
        }
    }

    /// Writes the queue when it differs from what was written last (a 10,000-item queue takes milliseconds to
    /// write; comparing takes microseconds).
    private func saveQueue() {
        let queue = engine.queue()
        guard state.withLock({ $0.savedQueue != queue }) else { return }
        do {
            try store.saveQueue(queue)
            state.withLock { $0.savedQueue = queue }
        } catch {
            logger.error("cannot save the queue in \(store.location): \(error)")
        }
    }

    /// Sets what `quit` does (end the service gracefully).
    package func onQuit(_ quit: @escaping @Sendable () -> Void) {
        state.withLock { $0.quit = quit }
    }

    /// Ends the service gracefully, as SIGTERM does.
    package func quit() {
        logger.info("quitting, as asked on the control socket")
        state.withLock { $0.quit }?()
    }

    /// The queue, the current entry first.
    package func queue() -> [QueueEntry] { engine.queue() }

    /// What the player is doing now. Paused before the first play, cued at a restored position, between items or
    /// held at an item's end, it shows the item that plays next with its tags and length. Writes nothing.
    package func snapshot() -> PlayerSnapshot {
        let shown = shownItem()
        let (isStopped, jumps) = state.withLock { ($0.isStopped, $0.jumps) }
        let current = shown.map { shown in
            TrackInfo(
                id: shown.entry.id, url: shown.entry.url.path, title: shown.info?.metadata.title,
                artists: shown.info?.metadata.artists ?? [], album: shown.info?.metadata.album,
                length: shown.info?.duration ?? 0)
        }
        let word = isStopped || current == nil ? "Stopped" : (engine.isPlaybackRequested ? "Playing" : "Paused")
        return PlayerSnapshot(
            status: word, position: shown?.seconds ?? 0, volume: Double(engine.volume), current: current, jumps: jumps,
            hasNext: engine.queue().count > 1)
    }

    /// The item being heard or, when none is, the one that plays next (its tags read from the file once).
    private func shownItem() -> Shown? {
        if let cue = engine.cue() {
            return Shown(
                entry: cue.entry, info: cue.info ?? details(of: cue.entry), frame: cue.startFrame, isHeard: false)
        }
        let status = engine.status()
        guard let info = status.current else { return nil }
        return Shown(entry: info.entry, info: info, frame: status.elapsedFrames, isHeard: true)
    }

    /// The tags and length of `entry`, read from its file (without decoding) the first time it is shown.
    private func details(of entry: QueueEntry) -> ItemInfo? {
        if let details = state.withLock({ $0.details }), details.entryID == entry.id { return details.info }
        let info = try? MPG123Decoder(url: entry.url, logger: logger).info(for: entry)
        state.withLock { $0.details = (entry.id, info) }
        return info
    }

    /// The snapshots from now on: one at once, then one after every change (and every second while playing).
    package func changes() -> AsyncStream<PlayerSnapshot> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: PlayerSnapshot.self, bufferingPolicy: .bufferingNewest(16))
        let id = state.withLock { state in
            defer { state.nextSubscriber += 1 }
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        telling.withLock { _ in
            let current = snapshot()
            state.withLock { $0.told = (current, engine.queue()) }
            continuation.yield(current)
        }
        return stream
    }

    /// Tells subscribers the current snapshot, if it or the queue changed since they were last told. With no
    /// subscriber, costs nothing.
    package func broadcast() {
        telling.withLock { _ in
            guard !state.withLock({ $0.subscribers.isEmpty }) else { return }
            let current = snapshot()
            let queue = engine.queue()
            let subscribers = state.withLock { state -> [AsyncStream<PlayerSnapshot>.Continuation] in
                if let told = state.told, told.snapshot == current, told.queue == queue { return [] }
                state.told = (current, queue)
                return Array(state.subscribers.values)
            }
            for subscriber in subscribers { subscriber.yield(current) }
        }
    }

    /// Notes what the engine reported: finished items go into the history.
    package func note(_ event: PlaybackEvent) {
        switch event {
        case .itemFinished(let entry), .itemFailed(let entry, _):
            remember(entry.url)
            saveAll()
        case .itemStarted, .queueFinished:
            saveAll()
        case .itemReady, .outputFailed:
            break
        }
        broadcast()
    }

    /// Carries out `command` and returns the reply to send. A read replies and does nothing else; any other
    /// command is saved before the reply (an acknowledged edit survives a SIGKILL) and told to subscribers if it
    /// changed anything. A command that fails changes nothing.
    package func execute(_ command: ControlCommand, id: RequestID?) -> ControlReply {
        do {
            var reply = try perform(command)
            reply.id = id
            reply.ok = true
            if !command.isRead {
                saveAll()
                broadcast()
            }
            return reply
        } catch {
            return .failure(id, error.description)
        }
    }

    private func perform(_ command: ControlCommand) throws(ControlError) -> ControlReply {
        switch command {
        case .play: play()
        case .pause: engine.pause()
        case .playPause:
            engine.isPlaybackRequested && !state.withLock({ $0.isStopped }) ? engine.pause() : play()
        case .stop:
            engine.pause()
            restartShownItem(atFrame: 0)
            state.withLock { $0.isStopped = true }
        case .next:
            if let current = engine.queue().first { remember(current.url) }
            engine.advanceToNextItem()
        case .previous: previous()
        case .status, .metadata, .subscribe: break
        case .position(let seconds, let relative): if let seconds { try seek(seconds, relative: relative) }
        case .volume(let level, let relative):
            if let level {
                let target = relative ? Double(engine.volume) + level : level
                engine.volume = Float(min(1, max(0, target)))
            }
        case .open(let uri): try open(uri)
        case .add(let items):
            return ControlReply(added: engine.enqueue(try checkedFiles(items, command: "add")).map(\.id))
        case .insert(let items, let after):
            let anchor = try entry(after, command: "insert")
            let files = try checkedFiles(items, command: "insert")
            return ControlReply(added: engine.insert(files, after: anchor).map(\.id))
        case .remove(let id): engine.remove(try entry(id, command: "remove"))
        case .move(let id, let position): engine.move(try entry(id, command: "move"), to: position - 1)
        case .clear: engine.removeAll()
        case .queue:
            let entries = engine.queue()
            return ControlReply(
                queue: entries.enumerated().map { index, entry in
                    QueueLine(id: entry.id, url: entry.url.path, current: index == 0)
                })
        case .background: application.enterBackground()
        case .foreground: application.enterForeground()
        case .quit: quit()
        }
        return ControlReply(state: snapshot())
    }

    private func play() {
        state.withLock { $0.isStopped = false }
        engine.play()
    }

    private func remember(_ url: URL) {
        do {
            try store.appendHistory(url, limit: Self.historyLimit)
        } catch {
            logger.error("cannot save the history in \(store.location): \(error)")
        }
    }

    /// Makes the shown item start again at `frame`: a seek when it is being heard, a cue when it is not yet (so
    /// that its start is still announced when playback reaches it).
    private func restartShownItem(atFrame frame: Int) {
        if shownItem()?.isHeard == true {
            engine.seek(toFrame: frame)
        } else {
            engine.cue(startFrame: frame)
        }
    }

    /// Plays the last item heard or skipped, followed by the one playing now; with no history, restarts the
    /// current item.
    private func previous() {
        guard let last = try? store.popHistory() else {
            restartShownItem(atFrame: 0)
            return
        }
        guard let current = engine.queue().first else {
            engine.enqueue([last])
            play()
            return
        }
        let inserted = engine.insert([last], after: current)
        engine.insert([current.url], after: inserted.first)
        engine.advanceToNextItem()
    }

    private func seek(_ seconds: Double, relative: Bool) throws(ControlError) {
        guard seconds.isFinite else { throw ControlError("position: '\(seconds)' is not a number of seconds") }
        guard let shown = shownItem() else { throw ControlError("position: nothing is queued") }
        guard let info = shown.info else {
            throw ControlError("position: \(shown.entry.url.path) cannot be read, so it cannot be sought in")
        }
        let target = min(max(0, relative ? shown.seconds + seconds : seconds), info.duration)
        restartShownItem(atFrame: Int((target * Double(info.format.sampleRate)).rounded()))
        state.withLock { $0.jumps += 1 }
    }

    private func open(_ uri: String) throws(ControlError) {
        let path = uri.hasPrefix("file://") ? URL(string: uri)?.path ?? "" : uri
        let url = try checkedFiles([path], command: "open")
        if let current = engine.queue().first {
            engine.insert(url, after: current)
            engine.advanceToNextItem()
        } else {
            engine.enqueue(url)
        }
        play()
    }

    /// The files `items` name (folders expanded), each checked to be a readable MP3; or an error naming the first
    /// that is missing, unreadable or not MP3, with nothing queued.
    private func checkedFiles(_ items: [String], command: String) throws(ControlError) -> [URL] {
        guard !items.isEmpty else { throw ControlError("\(command): give at least one file or folder") }
        if let missing = items.first(where: { !FileManager.default.fileExists(atPath: $0) }) {
            throw ControlError("\(command): no such file or folder: \(missing) (nothing was queued)")
        }
        let files = ItemPaths.expand(items, logger: logger)
        guard !files.isEmpty else {
            throw ControlError("\(command): \(items.joined(separator: ", ")) holds no .mp3 files (nothing was queued)")
        }
        if let failure = Self.firstUnplayable(files) {
            throw ControlError("\(command): \(failure) (nothing was queued)")
        }
        return files
    }

    /// The error of the first of `files` (in their order) that is not a readable MP3, checked on every core: a
    /// folder of 10,000 files is checked in a fraction of a second.
    private static func firstUnplayable(_ files: [URL]) -> DecoderError? {
        let failures = Mutex([Int: DecoderError]())
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            do throws(DecoderError) {
                try MPG123Decoder.check(files[index])
            } catch {
                failures.withLock { $0[index] = error }
            }
        }
        return failures.withLock { failures in failures.min { $0.key < $1.key }?.value }
    }

    private func entry(_ id: Int, command: String) throws(ControlError) -> QueueEntry {
        guard let entry = engine.queue().first(where: { $0.id == id }) else {
            throw ControlError("\(command): no queued item has id \(id); `playerctl queue` lists them")
        }
        return entry
    }
}

import FoundationEssentials
import Logging
import QueuePlayer
import Synchronization

/// Carries out control commands on the engine, keeps the state store current (queue and history before each reply,
/// the position on every change), and tells subscribers what changed. The control socket and MPRIS read the same
/// snapshots, so they never disagree.
///
/// Threading: any thread or task.
final class PlayerController: Sendable {
    /// How many finished or skipped items `previous` can go back through.
    static let historyLimit = 1000

    private let engine: PlaybackEngine
    private let application: Application
    private let store: StateStore
    private let logger: Logger
    private let state = Mutex(ControllerState())

    private struct ControllerState {
        var isStopped = false
        var jumps = 0
        /// The saved item and position shown while a restored queue waits, paused, for its first play.
        var restored: (entryID: Int, seconds: Double)?
        /// The queue as last written to the store.
        var savedQueue: [QueueEntry]?
        var subscribers: [Int: AsyncStream<PlayerSnapshot>.Continuation] = [:]
        var nextSubscriber = 0
        var quit: (@Sendable () -> Void)?
    }

    init(engine: PlaybackEngine, application: Application, store: StateStore, logger: Logger) {
        self.engine = engine
        self.application = application
        self.store = store
        self.logger = logger
    }

    /// Queues what `store` saved, cued at the saved item and position, with the saved volume and end-of-item
    /// action; playback waits for `play`. Returns false when nothing was saved.
    func restore() -> Bool {
        let saved: StateStore.Saved
        do {
            saved = try store.load()
        } catch {
            logger.error("cannot read the saved state in \(store.url.path): \(error); starting empty")
            return false
        }
        engine.volume = saved.volume
        engine.holdsAtItemEnd = saved.holdsAtItemEnd
        guard let first = saved.queue.first else { return false }
        engine.enqueue(restoring: saved.queue)
        state.withLock { $0.savedQueue = saved.queue }
        if saved.positionFrames > 0 { engine.cue(startFrame: saved.positionFrames) }
        state.withLock { $0.restored = (first.id, saved.positionSeconds) }
        let position = fixedDecimals(saved.positionSeconds, places: 2)
        logger.info(
            "restored \(saved.queue.count) queued item(s) from \(store.url.path): \(first.displayName) at \(position) s"
        )
        return true
    }

    /// Writes the queue and the position to the store now.
    func saveAll() {
        saveQueue()
        checkpoint()
    }

    /// Records the position (and volume, end-of-item action, playing or not) in the store.
    func checkpoint() {
        let status = engine.status()
        let restored = state.withLock { $0.restored }
        guard status.current != nil || restored == nil else { return }  // Nothing opened yet: keep what is saved.
        do {
            try store.checkpoint(
                positionFrames: status.elapsedFrames, positionSeconds: status.elapsed, volume: engine.volume,
                holdsAtItemEnd: engine.holdsAtItemEnd, isPlaying: engine.isPlaybackRequested)
        } catch {
            logger.error("cannot save the position in \(store.url.path): \(error)")
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
            logger.error("cannot save the queue in \(store.url.path): \(error)")
        }
    }

    /// Sets what `quit` does (end the service gracefully).
    func onQuit(_ quit: @escaping @Sendable () -> Void) {
        state.withLock { $0.quit = quit }
    }

    /// Ends the service gracefully, as SIGTERM does.
    func quit() {
        logger.info("quitting, as asked on the control socket")
        state.withLock { $0.quit }?()
    }

    /// The queue, the current entry first.
    func queue() -> [QueueEntry] { engine.queue() }

    /// What the player is doing now.
    func snapshot() -> PlayerSnapshot {
        let status = engine.status()
        let (isStopped, restored, jumps) = state.withLock { ($0.isStopped, $0.restored, $0.jumps) }
        var position = status.elapsed
        var current = status.current.map { info in
            TrackInfo(
                id: info.entry.id, url: info.entry.url.path, title: info.metadata.title,
                artists: info.metadata.artists, album: info.metadata.album, length: info.duration)
        }
        if current == nil, let restored, let entry = engine.queue().first, entry.id == restored.entryID {
            current = TrackInfo(id: entry.id, url: entry.url.path, title: nil, artists: [], album: nil, length: 0)
            position = restored.seconds
        }
        let word = isStopped || current == nil ? "Stopped" : (engine.isPlaybackRequested ? "Playing" : "Paused")
        return PlayerSnapshot(
            status: word, position: position, volume: Double(engine.volume), current: current, jumps: jumps,
            hasNext: engine.queue().count > 1)
    }

    /// The snapshots from now on: one at once, then one after every change (and every second while playing).
    func changes() -> AsyncStream<PlayerSnapshot> {
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
        continuation.yield(snapshot())
        return stream
    }

    /// Tells subscribers the current snapshot.
    func broadcast() {
        let current = snapshot()
        for subscriber in state.withLock({ Array($0.subscribers.values) }) {
            subscriber.yield(current)
        }
    }

    /// Notes what the engine reported: finished items go into the history.
    func note(_ event: PlaybackEvent) {
        switch event {
        case .itemFinished(let entry), .itemFailed(let entry, _):
            remember(entry.url)
            saveAll()
        case .itemStarted:
            state.withLock { $0.restored = nil }
            saveAll()
        case .queueFinished:
            saveAll()
        case .itemReady, .outputFailed:
            break
        }
        broadcast()
    }

    /// Carries out `command` and returns the reply to send.
    func execute(_ command: ControlCommand, id: RequestID?) -> ControlReply {
        do {
            var reply = try perform(command)
            reply.id = id
            reply.ok = true
            // Saved before the reply: an acknowledged edit survives a SIGKILL.
            saveAll()
            broadcast()
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
            snapshot().status == "Playing" ? engine.pause() : play()
        case .stop:
            engine.pause()
            _ = engine.seek(toFrame: 0)
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
            return ControlReply(added: engine.enqueue(try files(items, command: "add")).map(\.id))
        case .insert(let items, let after):
            let anchor = try entry(after, command: "insert")
            return ControlReply(added: engine.insert(try files(items, command: "insert"), after: anchor).map(\.id))
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
            logger.error("cannot save the history in \(store.url.path): \(error)")
        }
    }

    /// Plays the last item heard or skipped, followed by the one playing now; with no history, restarts the
    /// current item.
    private func previous() {
        guard let last = try? store.popHistory() else {
            _ = engine.seek(toFrame: 0)
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
        let status = engine.status()
        guard let item = status.current else { throw ControlError("position: nothing is playing") }
        let target = min(max(0, relative ? status.elapsed + seconds : seconds), item.duration)
        _ = engine.seek(toFrame: Int((target * Double(item.format.sampleRate)).rounded()))
        state.withLock { $0.jumps += 1 }
    }

    private func open(_ uri: String) throws(ControlError) {
        let path = uri.hasPrefix("file://") ? URL(string: uri)?.path ?? "" : uri
        let url = try files([path], command: "open")
        if let current = engine.queue().first {
            engine.insert(url, after: current)
            engine.advanceToNextItem()
        } else {
            engine.enqueue(url)
        }
        play()
    }

    /// The files `items` name (folders expanded), or an error naming the first that does not exist.
    private func files(_ items: [String], command: String) throws(ControlError) -> [URL] {
        guard !items.isEmpty else { throw ControlError("\(command): give at least one file or folder") }
        if let missing = items.first(where: { !FileManager.default.fileExists(atPath: $0) }) {
            throw ControlError("\(command): no such file or folder: \(missing) (nothing was queued)")
        }
        return ItemPaths.expand(items, logger: logger)
    }

    private func entry(_ id: Int, command: String) throws(ControlError) -> QueueEntry {
        guard let entry = engine.queue().first(where: { $0.id == id }) else {
            throw ControlError("\(command): no queued item has id \(id); `playerctl queue` lists them")
        }
        return entry
    }
}

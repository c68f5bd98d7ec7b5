import Foundation
import Logging
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import TestSupport

/// The daemon's core in-process: a player on a `NullSink`, a controller saving to an in-memory (or given) store,
/// and the player's events fed to the controller as the service feeds them. No socket, no process, no sleeps.
final class ServiceHarness: Sendable {
    let player: QueuePlayer
    let controller: PlayerController
    let store: StateStore
    /// Every event the player posted, from the start, after the controller has noted it. One reader.
    let events: AsyncStream<PlaybackEvent>
    private let feeding: Task<Void, Never>

    /// A harness playing into a `NullSink` paced as given.
    convenience init(pacing: NullSink.Pacing = .unpaced, store: StateStore? = nil) throws {
        try self.init(sink: NullSink(pacing: pacing), store: store)
    }

    /// A harness playing into `sink`: a `SteppedSink` for a test that must know which frame is heard. Commands take
    /// turns on `commandPath`.
    init(sink: any AudioSink, store: StateStore? = nil, commandPath: CommandPath = CommandPath()) throws {
        let logger = Logger(label: "test.service")
        let store = try store ?? StateStore()
        let application = Application()
        player = QueuePlayer(sink: sink, logger: logger, application: application)
        controller = PlayerController(
            player: player, application: application, store: store, logger: logger, commandPath: commandPath)
        self.store = store
        let (events, noted) = AsyncStream.makeStream(of: PlaybackEvent.self)
        self.events = events
        let playerEvents = player.playbackEvents()
        feeding = Task { [controller] in
            for await event in playerEvents {
                controller.note(event)
                noted.yield(event)
            }
            noted.finish()
        }
    }

    deinit {
        player.shutdown()
        feeding.cancel()
    }

    /// Carries out `command` as the socket would, and returns the reply.
    @discardableResult
    func run(_ command: ControlCommand) -> ControlReply {
        controller.execute(command, id: nil)
    }

    /// Adds fixtures by name and returns their queue ids.
    @discardableResult
    func add(_ names: String...) -> [Int] {
        run(.add(names.map { Fixtures.mp3($0).path })).added ?? []
    }

    /// The snapshot `status` replies with.
    var status: PlayerSnapshot { controller.snapshot() }

    /// Waits for the player to have opened entry `id` (its `itemReady`), whether that came before or after the call.
    func waitUntilOpened(_ id: Int) async {
        for await event in events {
            if case .itemReady(let info) = event, info.entry.id == id { return }
        }
    }

    /// What an idling MPD client is told from now on: each change of the player's state, as MPD's subsystems.
    func mpdChanges() -> AsyncStream<MPDSubsystems> {
        let feed = MPDChangeFeed()
        let (told, tell) = AsyncStream.makeStream(of: MPDSubsystems.self)
        _ = feed.add { tell.yield($0) }
        let following = feed.follow(controller)
        tell.onTermination = { [controller] _ in controller.removeChangeObserver(following) }
        return told
    }

    /// Sets the volume to `level` from the control socket, and returns how many of the changes `changes` (from
    /// ``mpdChanges()``) told until then were changes of the queue: each command before that changed it must count one.
    func queueChangesUntilVolume(_ changes: inout AsyncStream<MPDSubsystems>.Iterator, level: Double) async -> Int {
        run(.volume(level, relative: false))
        var count = 0
        while let change = await changes.next() {
            if change.contains(.playlist) { count += 1 }
            if change.contains(.mixer) { return count }
        }
        return count
    }

    /// Waits on the subscription for the first snapshot that satisfies `condition`, and returns it.
    func waitFor(_ condition: (PlayerSnapshot) -> Bool) async -> PlayerSnapshot? {
        for await snapshot in controller.changes() where condition(snapshot) { return snapshot }
        return nil
    }
}

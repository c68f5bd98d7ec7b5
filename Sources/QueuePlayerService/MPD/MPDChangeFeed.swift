import Synchronization

/// Tells every MPD connection what changed (for `idle`), from one observer of the controller's changes.
///
/// Threading: any thread; each connection's `tell` hops to its own event loop.
package final class MPDChangeFeed: Sendable {
    private let listeners = Mutex(Registrations<@Sendable (MPDSubsystems) -> Void>())
    /// The state last seen, which the next is compared with, and what was told at once since (from the player's
    /// aspects), which that comparison does not tell again.
    private let seen = Mutex<(last: MPDPlayerState?, toldAtOnce: MPDSubsystems)>((nil, []))

    package init() {}

    /// Registers `tell`, called with each change from now on; returns what ``remove(_:)`` takes.
    package func add(_ tell: @escaping @Sendable (MPDSubsystems) -> Void) -> Int {
        listeners.withLock { $0.add(tell) }
    }

    package func remove(_ id: Int) {
        listeners.withLock { _ = $0.remove(id) }
    }

    /// Tells every listener what each change of `controller`'s state changed, from now until
    /// ``PlayerController/removeChangeObserver(_:)`` is given the id returned. Each change is told on the thread that
    /// made it, without a hop: an idling client hears of it as soon as its event loop runs. What the player's aspects
    /// show (the volume, playback, modes, the queue's length) is told before the controller takes its snapshot; the
    /// rest (a station's title, a move in the queue, an error) once the snapshot is compared with the last.
    package func follow(_ controller: PlayerController) -> Int {
        controller.observeChanges(
            aspects: { [self] aspects in
                let changed = MPDSubsystems(aspects)
                seen.withLock { $0.toldAtOnce = changed }
                tell(changed)
            },
            { [self] snapshot, queue in
                let state = MPDPlayerState(snapshot: snapshot, listing: queue)
                let (previous, toldAtOnce) = seen.withLock { seen in
                    defer { seen = (state, []) }
                    return seen
                }
                guard let previous else { return }
                tell(MPDSubsystems.changes(from: previous, to: state).subtracting(toldAtOnce))
            })
    }

    /// Tells every listener that `changed` changed (a stored playlist: a change no player state shows).
    package func tell(_ changed: MPDSubsystems) {
        guard !changed.isEmpty else { return }
        for tell in listeners.withLock({ $0.values }) { tell(changed) }
    }
}

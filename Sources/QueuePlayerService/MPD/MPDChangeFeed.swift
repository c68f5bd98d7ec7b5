import Synchronization

/// Tells every MPD connection what changed (for `idle`), from one subscription to the controller's states.
///
/// Threading: any thread; each connection's `tell` hops to its own event loop.
package final class MPDChangeFeed: Sendable {
    private let listeners = Mutex<(next: Int, tell: [Int: @Sendable (Set<MPDSubsystem>) -> Void])>((0, [:]))

    package init() {}

    /// Registers `tell`, called with each change from now on; returns what ``remove(_:)`` takes.
    package func add(_ tell: @escaping @Sendable (Set<MPDSubsystem>) -> Void) -> Int {
        listeners.withLock { listeners in
            defer { listeners.next += 1 }
            listeners.tell[listeners.next] = tell
            return listeners.next
        }
    }

    package func remove(_ id: Int) {
        _ = listeners.withLock { $0.tell.removeValue(forKey: id) }
    }

    /// The number of connections registered.
    package var count: Int { listeners.withLock { $0.tell.count } }

    /// Follows `states` until it ends, telling every listener what changed between each state and the one before.
    package func follow(_ states: AsyncStream<MPDPlayerState>) async {
        var last: MPDPlayerState?
        for await state in states {
            defer { last = state }
            guard let previous = last else { continue }
            tell(MPDSubsystem.changes(from: previous, to: state))
        }
    }

    /// Tells every listener that `changed` changed (a stored playlist: a change no player state shows).
    package func tell(_ changed: Set<MPDSubsystem>) {
        guard !changed.isEmpty else { return }
        for tell in listeners.withLock({ Array($0.tell.values) }) { tell(changed) }
    }
}

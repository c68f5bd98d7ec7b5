import Dispatch
import Synchronization

/// Identifies an observer of a ``QueuePlayer`` (time, current item or property), for
/// ``QueuePlayer/removeObserver(_:)``. Once the removal returns, no call of the observer's block starts.
public struct ObserverToken: Hashable, Sendable {
    enum Kind: Hashable, Sendable {
        case time
        case player
    }

    let id: Int
    let kind: Kind
}

/// Identifies a time observer; the same token type as every other observer's.
public typealias TimeObserverToken = ObserverToken

/// Runs an observer's calls on its queue and lets removal promise that no call starts afterwards.
///
/// Each call runs inside the gate, with ``ObserverCall/current`` bound; ``close()`` clears the flag and then passes
/// through the gate, so once it returns no call can start. A removal made from inside any observer call does not
/// wait: a call removing its own observer, or two observers removing each other, would otherwise wait forever.
/// Any thread.
final class ObserverGate: Sendable {
    private let queue: DispatchQueue
    private let isOpen = Atomic<Bool>(true)
    private let gate = Mutex<Void>(())

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Queues `body` on the observer's queue, to run with `call` bound, unless the gate is closed by then.
    func run(_ call: ObserverCall, _ body: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            gate.withLock { _ in
                guard isOpen.load(ordering: .acquiring) else { return }
                ObserverCall.$current.withValue(call) { body() }
            }
        }
    }

    /// Stops all further calls. Waits for a call in progress on another thread to finish, unless called from inside
    /// an observer call.
    func close() {
        isOpen.store(false, ordering: .releasing)
        if ObserverCall.current == nil {
            gate.withLock { _ in }
        }
    }
}

import Dispatch
import PosixThreads
import Synchronization

/// The thread a sink renders on: one per stream, started by the sink's `start` and ended by its `stop`, which waits
/// until the thread has exited so that no render call follows it.
///
/// The thread's loop asks ``isCurrent(_:)`` with the generation it was given and ends when that is false; it
/// waits on ``wake`` between periods and while parked, and signals ``reachedEnd`` when it has played everything up
/// to the end of the stream. `Stream` is what the sink's other calls need of the running stream (its renderer, its
/// clock), read with ``current``.
///
/// Threading: any thread may start, stop and read it; the loop's checks take no lock and allocate nothing.
final class SinkThread<Stream: Sendable>: Sendable {
    private struct Running {
        var stream: Stream
        /// Signalled by the thread as it exits.
        var exited: DispatchSemaphore
    }

    private let running = Mutex<Running?>(nil)
    private let generation = Atomic<Int>(0)
    /// Wakes the thread from its wait for the next period, or from a park.
    let wake = DispatchSemaphore(value: 0)
    /// Signalled by the thread when it has played up to the end of the stream, and by ``stop()``; a sink's `drain`
    /// waits on it.
    let reachedEnd = DispatchSemaphore(value: 0)
    /// Set by the thread once it has played everything up to the end of the stream; cleared as it renders again.
    let isAtEndOfStream = Atomic<Bool>(false)
    /// The kernel's id of the running thread (as in /proc/self/task), set by the thread as it starts; 0 before.
    let threadID = Atomic<Int32>(0)

    /// The running stream, or nil when stopped.
    var current: Stream? { running.withLock { $0?.stream } }

    /// Starts a thread named `name` that runs `loop` with its generation, with real-time priority where allowed
    /// when `realTime` (a thread that keeps a device's time; see `RealTimeScheduling`). Call ``stop()`` first: one
    /// thread runs at a time.
    func start(name: String, realTime: Bool, stream: Stream, loop: @escaping @Sendable (_ generation: Int) -> Void) {
        let exited = DispatchSemaphore(value: 0)
        let myGeneration = generation.add(1, ordering: .acquiringAndReleasing).newValue
        isAtEndOfStream.store(false, ordering: .releasing)
        running.withLock { $0 = Running(stream: stream, exited: exited) }
        threadID.store(0, ordering: .releasing)
        PosixThread.start(name: name, realTime: realTime) { [self] in
            threadID.store(PosixThread.currentThreadID(), ordering: .releasing)
            loop(myGeneration)
            exited.signal()
        }
    }

    /// Whether the thread given `myGeneration` is still the one to run. Lock-free.
    func isCurrent(_ myGeneration: Int) -> Bool {
        generation.load(ordering: .acquiring) == myGeneration
    }

    /// Tells the running thread to end, wakes it, runs `interrupt` with its stream (to end any other wait it may be
    /// in), and waits until it has exited. Does nothing when no thread runs.
    func stop(interrupt: (Stream) -> Void = { _ in }) {
        generation.add(1, ordering: .acquiringAndReleasing)
        guard
            let thread = running.withLock({ state in
                defer { state = nil }
                return state
            })
        else { return }
        wake.signal()
        reachedEnd.signal()
        interrupt(thread.stream)
        thread.exited.wait()
    }
}

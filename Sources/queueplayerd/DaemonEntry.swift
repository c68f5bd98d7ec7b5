import Dispatch
import QueuePlayerService

/// The daemon's entry point: sets up the allocator and blocks the signals it handles before anything else runs (every
/// thread inherits the mask), then runs ``DaemonCommand`` on the global executor while the main thread waits for it.
///
/// Not an `async` main: that one hands the main thread to `dispatch_main()`, which ends it with `pthread_exit`, and
/// the forced unwind of its stack searched the binary's unwind tables at every start, leaving half a megabyte of them
/// resident (the kernel maps 64 KiB around each page touched). Nothing in the daemon runs on the main actor.
@main
enum DaemonEntry {
    /// Runs the daemon to its end on the main thread's behalf; an exit status other than success leaves through
    /// `exit` inside ``DaemonCommand/parseAndRun()``.
    static func main() {
        FreedMemory.configureAllocator()
        ProcessLifecycle.blockHandledSignals()
        let finished = DispatchSemaphore(value: 0)
        Task.detached {
            await DaemonCommand.parseAndRun()
            finished.signal()
        }
        finished.wait()
    }
}

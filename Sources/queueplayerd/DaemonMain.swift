import Dispatch
import Glibc
import QueuePlayerService

/// The daemon's main: sets up the allocator and blocks the signals it handles before anything else runs (every
/// thread inherits the mask), then runs ``DaemonCommand`` on the global executor while the main thread waits.
///
/// Not an `async` main: that one hands the main thread to `dispatch_main()`, which ends it with `pthread_exit`, and
/// the forced unwind of its stack searched the binary's unwind tables at every start, leaving half a megabyte of them
/// resident (the kernel maps 64 KiB around each page touched). Nothing in the daemon runs on the main actor.
@main
enum DaemonMain {
    /// Runs the daemon on the global executor; the task that runs it ends the process with its exit status, while
    /// the main thread waits.
    static func main() {
        FreedMemory.configureAllocator()
        BackgroundSignals.blockHandledSignals()
        Task.detached { leave(status: await DaemonCommand.parseAndRun()) }
        DispatchSemaphore(value: 0).wait()
    }

    /// Ends the process, from any thread, once the daemon has finished (its state saved, its socket removed, its
    /// streams and bus closed): flushes the standard I/O streams, as `exit` would, then `_exit`, which skips the
    /// shared libraries' destructors. Those belong mostly to libraries that libpulse and libsystemd load and the daemon
    /// never calls (libsndfile and its codecs, X11, xcb, gcrypt, the compressors); running them faulted in a page of
    /// each that nothing had touched, and with the kernel's fault-around that raised the daemon's peak resident memory
    /// by about 0.3 MiB at its very end. Neither the daemon nor its packages register an `atexit` handler; the C++
    /// runtime's static destructors, skipped as well, free only memory that ends with the process.
    private static func leave(status: Int32) -> Never {
        fflush(nil)
        _exit(status)
    }
}


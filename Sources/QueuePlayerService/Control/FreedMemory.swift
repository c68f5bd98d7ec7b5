import CMalloc
import Dispatch
import Synchronization

/// Gives memory that a large edit of the queue used and freed back to the system.
///
/// Adding a folder of 10,000 files reads the folder, checks each file, sorts the names, writes the queue, encodes
/// the reply and tells MPRIS: some 5 MiB of scratch memory, freed afterwards but kept by glibc's allocator among the
/// pages that now hold the new entries, where its own trimming (from the top of each heap) cannot reach.
/// `malloc_trim` returns every free page of every heap. It runs once, a second after an edit of at least
/// ``largeEdit`` entries, so that what the reply and MPRIS freed on their threads is returned too, and a few large
/// edits in a row cost one trim of a few milliseconds.
///
/// Threading: any thread; the trim runs on a global queue.
package enum FreedMemory {
    /// The most malloc arenas (glibc's default is eight a core). Each thread that allocates otherwise soon has an
    /// arena of its own, which keeps the pages it once used; two hold the daemon's memory about 0.5 MiB lower, and
    /// more steadily, with 10,000 entries queued, and adding them is as fast as with the default (one arena made it
    /// about 10% slower: every thread then takes the same lock).
    static let arenaLimit: Int32 = 2

    /// Sets up glibc's allocator for a long-running daemon (``arenaLimit``). Call it first thing, before threads
    /// start allocating.
    package static func configureAllocator() {
        _ = mallopt(M_ARENA_MAX, arenaLimit)
    }

    /// The smallest change in queued entries after which freed memory is returned.
    static let largeEdit = 1_000
    /// How long after a large edit the memory is returned.
    static let delay = DispatchTimeInterval.seconds(1)
    private static let isPending = Atomic(false)

    /// Returns freed memory to the system, a ``delay`` from now, if the queue grew or shrank by at least
    /// ``largeEdit`` entries.
    static func release(afterQueueChangedFrom before: Int, to after: Int) {
        guard abs(after - before) >= largeEdit, !isPending.exchange(true, ordering: .acquiringAndReleasing) else {
            return
        }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay) {
            isPending.store(false, ordering: .releasing)
            _ = malloc_trim(0)
        }
    }
}

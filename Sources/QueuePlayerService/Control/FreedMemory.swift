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
enum FreedMemory {
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

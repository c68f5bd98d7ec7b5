import CMalloc

/// Gives memory that a large edit of the queue used and freed back to the system.
///
/// Adding a folder of 10,000 files reads the folder, checks each file, sorts the names and writes the queue: some
/// 4 MiB of scratch memory, freed afterwards but kept by glibc's allocator among the pages that now hold the new
/// entries, where its own trimming (from the top of each heap) cannot reach. `malloc_trim` returns every free page
/// of every heap; it costs a few milliseconds, so it runs only after an edit of at least ``largeEdit`` entries.
///
/// Threading: any thread; the allocator locks each heap in turn.
enum FreedMemory {
    /// The smallest change in queued entries after which freed memory is returned.
    static let largeEdit = 1_000

    /// Returns freed memory to the system if the queue grew or shrank by at least ``largeEdit`` entries.
    static func release(afterQueueChangedFrom before: Int, to after: Int) {
        guard abs(after - before) >= largeEdit else { return }
        _ = malloc_trim(0)
    }
}

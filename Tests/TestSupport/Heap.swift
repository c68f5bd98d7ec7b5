import CMalloc

/// The process's heap as glibc's allocator counts it: what a leak grows, which resident memory (holding also what
/// was freed and kept for reuse) cannot tell from a step.
///
/// Threading: any thread.
public enum Heap {
    /// The bytes the allocator has handed out and not had back, in MiB, over all its arenas (`mallinfo2`): small
    /// blocks in use plus blocks mapped on their own. Under AddressSanitizer, whose allocator stands in for glibc's,
    /// it does not move.
    public static func inUseMiB() -> Double {
        let info = mallinfo2()
        return Double(info.uordblks + info.hblkhd) / 1_048_576
    }
}

import QueuePlayer

/// The queue as front ends list it and subscribers are told it: the entries in play order, the current one first,
/// and the priorities some of them have (MPD's `prio`), read together. A change of either is a change of the queue.
package struct QueueListing: Equatable, Sendable {
    package var entries: [QueueEntry]
    /// The priority of each entry that has one, by entry id (``QueuePlayer/QueuePlayer/priorities()``).
    package var priorities: [Int: UInt8]

    /// A listing of `entries`, those in `priorities` with theirs.
    package init(entries: [QueueEntry], priorities: [Int: UInt8] = [:]) {
        self.entries = entries
        self.priorities = priorities
    }
}

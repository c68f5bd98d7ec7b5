import QueuePlayer
import QueuePlayerControl

/// The queue as front ends list it and subscribers are told it: the entries in play order, the current one first,
/// the priorities some of them have (MPD's `prio`) and the tags given to some (MPD's `addtagid`), read together. A
/// change of any is a change of the queue.
package struct QueueListing: Equatable, Sendable {
    package var entries: [QueueEntry]
    /// The priority of each entry that has one, by entry id (``QueuePlayer/QueuePlayer/priorities()``).
    package var priorities: [Int: UInt8]
    /// The tags given to each entry that has some, by entry id, in the order given.
    package var tags: [Int: [EntryTag]]

    /// A listing of `entries`, those in `priorities` with theirs, those in `tags` with theirs.
    package init(entries: [QueueEntry], priorities: [Int: UInt8] = [:], tags: [Int: [EntryTag]] = [:]) {
        self.entries = entries
        self.priorities = priorities
        self.tags = tags
    }
}

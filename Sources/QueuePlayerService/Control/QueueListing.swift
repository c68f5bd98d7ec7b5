import QueuePlayer
import QueuePlayerControl

/// The queue as front ends list it and subscribers are told it: the entries in play order, the current one first,
/// the priorities some of them have (MPD's `prio`), the tags given to some (MPD's `addtagid`) and the part of its
/// item some play (MPD's `rangeid`), read together. A change of any is a change of the queue.
package struct QueueListing: Equatable, Sendable {
    package var entries: [QueueEntry]
    /// The priority of each entry that has one, by entry id (``QueuePlayer/QueuePlayer/priorities()``).
    package var priorities: [Int: UInt8]
    /// The tags given to each entry that has some, by entry id, in the order given.
    package var tags: [Int: [EntryTag]]
    /// The part of its item each entry playing a part plays, by entry id
    /// (``QueuePlayer/QueuePlayer/playbackRanges()``).
    package var ranges: [Int: MediaTimeRange]

    /// A listing of `entries`, those in `priorities`, `tags` and `ranges` with theirs.
    package init(
        entries: [QueueEntry], priorities: [Int: UInt8] = [:], tags: [Int: [EntryTag]] = [:],
        ranges: [Int: MediaTimeRange] = [:]
    ) {
        self.entries = entries
        self.priorities = priorities
        self.tags = tags
        self.ranges = ranges
    }
}

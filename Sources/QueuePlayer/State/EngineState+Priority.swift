import FoundationEssentials

/// Priorities (`QueuePlayer/setPriority(_:of:)`) as transitions of the engine's one state: while shuffled, the
/// entries after the current one play in groups of falling priority, each group in random order, as MPD's `prio`
/// orders its random sequence. Unshuffled, a priority is kept and changes no order.
extension PlaybackEngine.State {
    /// The priority of the entry with `id`: 0 unless one was given.
    func priority(of id: Int) -> UInt8 {
        player.priorities[id] ?? 0
    }

    /// Gives `entries` `priority`. The current entry, and entries not queued, are left as they are; while shuffled,
    /// each entry whose priority changed moves to a random place in its new group.
    mutating func setPriority(
        _ priority: UInt8, of entries: [QueueEntry], audibleFrame audible: Int, into actions: inout [Action]
    ) {
        let order = order
        guard let first = order.first else { return }
        let queued = Set(order.dropFirst().map(\.id))
        var changed: Set<Int> = []
        for entry in entries where queued.contains(entry.id) && self.priority(of: entry.id) != priority {
            player.priorities[entry.id] = priority == 0 ? nil : priority
            changed.insert(entry.id)
        }
        guard player.shuffleMode == .items, !changed.isEmpty else { return }
        let upcoming = order.dropFirst()
        let moving = upcoming.filter { changed.contains($0.id) }.shuffled()
        let staying = upcoming.filter { !changed.contains($0.id) }
        let start = staying.firstIndex { self.priority(of: $0.id) <= priority } ?? staying.count
        let end = staying[start...].firstIndex { self.priority(of: $0.id) < priority } ?? staying.count
        let group = Self.interleaved(Array(staying[start..<end]), moving)
        let reordered = [first] + staying[..<start] + group + staying[end...]
        reorderIfChanged(to: reordered, from: order, audibleFrame: audible, into: &actions)
    }

    /// `entries` in groups of falling priority, each group shuffled: a shuffled order of the entries to come.
    func shuffledByPriority(_ entries: [QueueEntry]) -> [QueueEntry] {
        let groups = Dictionary(grouping: entries) { priority(of: $0.id) }
        return groups.keys.sorted(by: >).flatMap { groups[$0, default: []].shuffled() }
    }

    /// Where the entries without a priority begin in `order` (after the current entry): the group new entries go
    /// to while shuffled.
    func unprioritizedStart(in order: [QueueEntry]) -> Int {
        guard !order.isEmpty else { return 0 }
        return order.dropFirst().firstIndex { priority(of: $0.id) == 0 } ?? order.count
    }

    /// `first` and `second` merged at random, each keeping its own order: every interleaving equally likely.
    private static func interleaved(_ first: [QueueEntry], _ second: [QueueEntry]) -> [QueueEntry] {
        var merged: [QueueEntry] = []
        merged.reserveCapacity(first.count + second.count)
        var (firstIndex, secondIndex) = (0, 0)
        while firstIndex < first.count || secondIndex < second.count {
            let firstLeft = first.count - firstIndex
            let secondLeft = second.count - secondIndex
            if Int.random(in: 0..<(firstLeft + secondLeft)) < firstLeft {
                merged.append(first[firstIndex])
                firstIndex += 1
            } else {
                merged.append(second[secondIndex])
                secondIndex += 1
            }
        }
        return merged
    }
}

import FoundationEssentials

/// The shuffle mode (`QueuePlayer/shuffleMode`) as transitions of the engine's one state. The queue is the play
/// order, so shuffling is a new order of the items after the current one, in groups of falling priority
/// (State/EngineState+Priority.swift); items appended while it is on go to random places among those without a
/// priority; turning it off puts them back in the order they had (those added meanwhile after them, in the order they
/// were added).
extension PlaybackEngine.State {
    /// Shuffles the items after the current one, or puts them back in their order.
    mutating func setShuffleMode(
        _ mode: QueuePlayer.ShuffleMode, audibleFrame audible: Int, into actions: inout [Action]
    ) {
        guard mode != player.shuffleMode else { return }
        player.shuffleMode = mode
        let order = order
        guard let first = order.first else { return }
        var upcoming = Array(order.dropFirst())
        switch mode {
        case .items:
            player.unshuffledRanks = Dictionary(uniqueKeysWithValues: upcoming.enumerated().map { ($1.id, $0) })
            upcoming = shuffledByPriority(upcoming)
        case .off:
            let ranks = player.unshuffledRanks
            upcoming.sort { (ranks[$0.id] ?? Int.max, $0.id) < (ranks[$1.id] ?? Int.max, $1.id) }
            player.unshuffledRanks = [:]
        }
        reorderIfChanged(to: [first] + upcoming, from: order, audibleFrame: audible, into: &actions)
    }

    /// Queues `entries`, new, each at a random place among the entries after the current one that have no priority
    /// (or, with none queued, first): appending while shuffled.
    mutating func insertShuffled(_ entries: [QueueEntry], audibleFrame audible: Int, into actions: inout [Action]) {
        let order = order
        var shuffled = order
        let unprioritized = max(1, unprioritizedStart(in: order))
        for entry in entries {
            let lowest = min(unprioritized, shuffled.count)
            shuffled.insert(entry, at: Int.random(in: lowest...shuffled.count))
        }
        reorderIfChanged(to: shuffled, from: order, audibleFrame: audible, into: &actions)
    }

    /// Makes `new` the order unless it is `old`, the order now.
    mutating func reorderIfChanged(
        to new: [QueueEntry], from old: [QueueEntry], audibleFrame audible: Int, into actions: inout [Action]
    ) {
        guard new != old, !phase.isFinal else { return }
        actions += [.failSeeks(reorder(to: new, audibleFrame: audible)), .wakeDecoder]
    }
}

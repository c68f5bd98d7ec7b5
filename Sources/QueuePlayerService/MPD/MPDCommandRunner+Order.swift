import QueuePlayer
import QueuePlayerControl

/// The commands that reorder the queue: `move`, `moveid`, `swap`, `swapid`, `shuffle`. Each is one change of the
/// player's order (its `rearrange` or `move`), so an idling client hears of one `playlist` change.
extension MPDCommandRunner {
    /// MPD's `move FROM|START:END TO`: the song, or the songs of the range in their order, to position TO of the queue
    /// that results (`+N`: N after the current song; `-0`: where the current song is).
    func move(positions: String, to destination: String) throws(MPDError) -> String {
        let queue = controller.mpdState().queue
        let moved = try MPDArguments.songs(positions, count: queue.count)
        let index = try Self.destination(destination, count: queue.count - moved.count)
        if moved.count == 1 { return try carryOut(.move(queue[moved.lowerBound].id, to: index + 1)) }
        var order = queue
        order.removeSubrange(moved)
        order.insert(contentsOf: queue[moved], at: index)
        return try rearrange(queue, to: order)
    }

    /// MPD's `moveid ID TO`.
    func move(id: String, to destination: String) throws(MPDError) -> String {
        let queue = controller.mpdState().queue
        let entry = queue[try position(ofID: id, in: queue)]
        return try carryOut(.move(entry.id, to: try Self.destination(destination, count: queue.count - 1) + 1))
    }

    /// MPD's `swap POS1 POS2`: the two songs change places.
    func swap(position first: String, _ second: String) throws(MPDError) -> String {
        let queue = controller.mpdState().queue
        let positions = try [first, second].map { text throws(MPDError) in
            let position = try MPDArguments.unsigned(text)
            guard position < queue.count else { throw MPDError(.argument, "Bad song index") }
            return position
        }
        return try swap(positions[0], positions[1], in: queue)
    }

    /// MPD's `swapid ID1 ID2`.
    func swap(id first: String, _ second: String) throws(MPDError) -> String {
        let queue = controller.mpdState().queue
        return try swap(try position(ofID: first, in: queue), try position(ofID: second, in: queue), in: queue)
    }

    /// MPD's `shuffle [START:END]`: the songs of the range (all of them by default) in a random order. The current
    /// song stays current unless playback is stopped, as in mpd, where stopping forgets the current song: here the
    /// song that comes first is then the current one.
    func shuffle(_ positions: String?) throws(MPDError) -> String {
        let state = controller.mpdState()
        let queue = state.queue
        var range = try positions.map { text throws(MPDError) in try MPDArguments.range(text, count: queue.count) }
            ?? queue.indices
        if range.lowerBound == 0, state.snapshot.status != .stopped { range = range.dropFirst() }
        var order = queue
        order[range].shuffle()
        return try rearrange(queue, to: order)
    }

    /// Where MPD's `TO` puts songs in a queue of `count` songs once they have been taken out of it: a position up to
    /// `count`, or relative to the current song, which is the queue's first here.
    private static func destination(_ text: String, count: Int) throws(MPDError) -> Int {
        let (index, number) = try relativePosition(text, limit: count)
        guard (0...count).contains(index) else { throw MPDError(.argument, "Number too large: \(number)") }
        return index
    }

    private func swap(_ first: Int, _ second: Int, in queue: [QueueEntry]) throws(MPDError) -> String {
        var order = queue
        order.swapAt(first, second)
        return try rearrange(queue, to: order)
    }

    /// Makes `order` the queue's order, unless it is `queue`, the order read: nothing changed, nothing to tell.
    private func rearrange(_ queue: [QueueEntry], to order: [QueueEntry]) throws(MPDError) -> String {
        order == queue ? "" : try carryOut(.rearrange(ids: order.map(\.id)))
    }
}

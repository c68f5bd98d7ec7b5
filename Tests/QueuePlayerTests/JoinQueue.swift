import TestSupport

@testable import QueuePlayer

extension QueuePlayer {
    /// A player of `count` items, the join fixtures in turn, with nothing played: for tests of the queue's order.
    static func ofJoinItems(_ count: Int, sink: any AudioSink = NullSink(pacing: .unpaced)) -> QueuePlayer {
        let names = ["join-1", "join-2", "join-3"]
        let items = (0..<count).map { PlayerItem(url: Fixtures.mp3(names[$0 % names.count])) }
        return QueuePlayer(items: items, sink: sink, logger: quietLogger)
    }
}

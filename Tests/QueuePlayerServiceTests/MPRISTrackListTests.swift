import QueuePlayer
import QueuePlayerControl
import TestTiers
import Testing

@testable import QueuePlayerService

/// Which TrackList signals an edit of the queue gives: one per entry for small edits, one replacement for large.
@Suite("MPRIS TrackList changes", .tier(.deterministic))
struct MPRISTrackListTests {
    static func state(_ ids: some Sequence<Int>) -> MPRISState {
        MPRISState(
            snapshot: PlayerSnapshot(status: .paused, position: 0, volume: 1, current: nil),
            queue: ids.map { QueueEntry(id: $0, location: "/music/\($0).mp3") })
    }

    @Test("a few entries added and removed are signalled one by one, each after the entry before it")
    func smallEdit() {
        let change = Self.state([1, 4, 2, 5]).trackListChange(since: Self.state([1, 2, 3]))
        guard case .edited(let removed, let added) = change else {
            Issue.record("expected an edit, got \(String(describing: change))")
            return
        }
        #expect(removed == [3])
        #expect(added.map(\.0.id) == [4, 5] && added.map(\.after) == [1, 2])
        #expect(Self.state([1, 2]).trackListChange(since: Self.state([1, 2])) == nil)
    }

    @Test("a folder's worth of entries, added or removed, is one replacement")
    func largeEdit() {
        let limit = MPRISState.largestEditSignalledByEntry
        let few = Self.state(1...2)
        #expect(Self.state(1...(2 + limit)).trackListChange(since: few) != .replaced)
        #expect(Self.state(1...(3 + limit)).trackListChange(since: few) == .replaced)
        #expect(few.trackListChange(since: Self.state(1...(3 + limit))) == .replaced)
        #expect(Self.state(1...10_000).trackListChange(since: Self.state([])) == .replaced)
    }
}

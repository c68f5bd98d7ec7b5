import TestSupport
import TestTiers
import Testing

@Suite("Snapclient's log: the hard resyncs a room hears are counted, the stream's end is not", .tier(.deterministic))
struct SnapclientLogTests {
    /// The last lines of every run: the final part of a chunk, dropped, and then no more chunks.
    private let end: [Substring] = [
        "17-15-11.821 [Info] (Stream) Exception: Not enough frames available, requested frames: 882, available: 69",
        "17-15-11.821 [Debug] (Stream) Failed to get chunk, returning silence",
        "17-15-11.841 [Debug] (Stream) age > 0: 18ms, dropping old chunks",
        "17-15-12.021 [Info] (Stream) No chunks available",
    ]
    /// A client 5.4 ms early mid-item: it plays silence until its next chunk is due.
    private let early: [Substring] = [
        "17-15-05.100 [Info] (Stream) pShortBuffer->full() && (abs(shortMedian_) > 5): -5446",
        "17-15-05.120 [Debug] (Stream) Silent frames: 280, frames: 882, age: -6.35",
    ]
    /// A stream that ran dry mid-item (a stalled server) and came back late.
    private let dryThenLate: [Substring] = [
        "17-15-07.000 [Info] (Stream) Exception: No chunks available, requested frames: 882",
        "17-15-07.001 [Info] (Stream) No chunks available",
        "17-15-07.150 [Debug] (Stream) age > 0: 30ms, dropping old chunks",
    ]

    @Test("the end alone counts none; each resync synced again after, mid-stream, counts one")
    func countsResyncsHeard() {
        #expect(SnapcastServer.hardSyncs(inClientLog: end) == 0)
        #expect(SnapcastServer.hardSyncs(inClientLog: early + end) == 1)
        #expect(SnapcastServer.hardSyncs(inClientLog: early + dryThenLate + end) == 2)
        #expect(SnapcastServer.hardSyncs(inClientLog: early + dryThenLate) == 2)
    }

    @Test("a resync never synced again after is no jump: nothing was heard after it")
    func resyncWithoutSoundAfter() {
        #expect(SnapcastServer.hardSyncs(inClientLog: early + [end[0]]) == 1)
        #expect(SnapcastServer.hardSyncs(inClientLog: Array(early.prefix(1))) == 0)
    }
}

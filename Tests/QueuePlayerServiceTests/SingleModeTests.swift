import Foundation
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import TestSupport
import TestTiers
import Testing

/// MPD's single mode on the daemon's core: without repeat, the player pauses after the current item, at the next
/// one's start, with nothing of the next heard (as mpd pauses at the border between two songs); `once` does it for one
/// item and is then off; with repeat, single is what repeats the item. Audio time moves only as the test renders.
@Suite("Single mode: a pause after the current item", .tier(.deterministic), .timeLimit(.minutes(1)))
struct SingleModeTests {
    @Test("single On pauses at the next item's start; single Once does it once, then the queue plays on")
    func pausesAtTheBorder() async throws {
        let sink = SteppedSink()
        let service = try ServiceHarness(sink: sink)
        let ids = service.add("join-1", "join-2", "join-1")
        #expect(service.run(.modes(repeat: nil, single: .on)).state?.single == .on)
        #expect(service.status.loop == .none, "single without repeat repeats nothing")
        service.run(.play)
        let first = try Fixtures.referenceFloat("join-1")
        #expect(sampleDifference(try sink.renderAll(frames: first.count / 2), first) == nil, "heard whole")
        await finished(ids[0], in: service)
        let border = service.status
        #expect(border.status == .paused && border.current?.id == ids[1] && border.position == 0, "\(border)")
        #expect(service.controller.queue().map(\.id) == Array(ids.dropFirst()), "the item heard left the queue")
        #expect(sink.streamIsPaused == true, "nothing of the next item is heard")
        #expect(service.controller.snapshot().single == .on, "single stays on")

        #expect(service.run(.modes(repeat: nil, single: .once)).state?.single == .once)
        service.run(.play)
        let second = try Fixtures.referenceFloat("join-2")
        #expect(sampleDifference(try sink.renderAll(frames: second.count / 2), second) == nil, "from its first frame")
        await finished(ids[1], in: service)
        let once = service.status
        #expect(once.status == .paused && once.current?.id == ids[2] && once.position == 0, "\(once)")
        #expect(once.single == .off, "once is used up")
        service.run(.play)
        let third = try sink.renderAll(frames: first.count / 2)
        #expect(sampleDifference(third, first) == nil)
    }

    @Test("repeat and single together repeat the item; repeat off keeps single; loop None turns both off")
    func withRepeat() throws {
        let service = try ServiceHarness()
        service.add("join-1")
        #expect(service.run(.modes(repeat: true, single: .on)).state?.loop == .track)
        let kept = try #require(service.run(.modes(repeat: false, single: nil)).state)
        #expect(kept.loop == .none && kept.single == .on, "MPD's repeat 0: the player now pauses after the item")
        #expect(service.run(.loop(.track)).state?.single == .on)
        let none = try #require(service.run(.loop(LoopStatus.none)).state)
        #expect(none.loop == .none && none.single == .off, "MPRIS's None from Track: nothing repeats, nothing pauses")
        #expect(service.run(.modes(repeat: nil, single: .on)).ok == true)
        #expect(service.run(.loop(.playlist)).state?.single == .off, "Playlist is repeat alone")
        #expect(service.run(.modes(repeat: nil, single: nil)).state?.loop == .playlist, "both nil only reports")
    }

    @Test("single Once outlives a restart, as mpd's state file keeps oneshot, and so does single On")
    func onceAcrossRestart() throws {
        let store = try StateStore()
        for single in [SingleMode.once, .on] {
            do {
                let first = try ServiceHarness(store: store)
                first.add("join-1", "join-2")
                #expect(first.run(.modes(repeat: nil, single: single)).state?.single == single)
            }
            let second = try ServiceHarness(store: store)
            #expect(second.controller.restore())
            #expect(second.status.single == single && second.status.loop == .none, "\(second.status)")
        }
    }

    /// Waits until the controller has noted that entry `id` played to its end.
    private func finished(_ id: Int, in service: ServiceHarness) async {
        for await event in service.events {
            if case .itemFinished(let entry) = event, entry.id == id { return }
        }
    }
}

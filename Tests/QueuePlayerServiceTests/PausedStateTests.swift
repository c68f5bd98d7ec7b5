import Foundation
import QueuePlayer
import QueuePlayerService
import TestSupport
import TestTiers
import Testing

/// Every state a paused queue reaches reports `Paused` with the item's tags and length: Debian's playerctl and
/// MPRIS clients treat `Stopped` with no metadata as "no player could handle this command".
@Suite("Paused states are whole", .tier(.deterministic), .timeLimit(.minutes(1)))
struct PausedStateTests {
    @Test("a queue waiting for its first play is Paused on the first item, with its tags and length")
    func waitingForFirstPlay() throws {
        let service = try ServiceHarness()
        service.add("id3v24-multi", "join-1")
        let status = service.status
        #expect(status.status == .paused)
        #expect(status.current?.title == "Duet")
        #expect(status.current?.artists == ["Ana Ñúñez", "Bo Li 李"])
        #expect(abs((status.current?.length ?? 0) - 3.0) < 0.001)
        #expect(status.position == 0)
    }

    @Test("next, position and previous before any play stay Paused, with the item they land on")
    func commandsBeforeFirstPlay() throws {
        let service = try ServiceHarness()
        let ids = service.add("id3v24-multi", "join-1", "join-2")
        let next = try #require(service.run(.next).state)
        #expect(next.status == .paused)
        #expect(next.current?.id == ids[1])
        #expect(abs((next.current?.length ?? 0) - 1.5) < 0.001)

        let sought = try #require(service.run(.position(1, relative: false)).state)
        #expect(sought.status == .paused)
        #expect(abs(sought.position - 1) < 0.001)
        let back = try #require(service.run(.position(0.25, relative: true)).state)
        #expect(abs(back.position - 1.25) < 0.001)

        let previous = try #require(service.run(.previous).state)
        #expect(previous.status == .paused)
        #expect(previous.current?.title == "Duet")
        #expect(previous.position == 0)
        #expect(
            service.controller.queue().map(\.url.lastPathComponent).prefix(2) == ["id3v24-multi.mp3", "join-1.mp3"])
    }

    @Test("stop reports Stopped, still naming the item; play starts it again from its beginning")
    func stopThenPlay() async throws {
        // Audio time moves only as the test renders: 0.2 s into the first item, however loaded the machine.
        let sink = SteppedSink()
        let service = try ServiceHarness(sink: sink)
        let ids = service.add("join-1", "join-2")
        service.run(.play)
        try sink.render(frames: 8_820, deadline: .now() + 10) { _, _ in }
        let playing = await service.waitFor { $0.status == .playing && $0.position > 0 }
        #expect(playing?.current?.id == ids[0])
        #expect(abs((playing?.position ?? 0) - 0.2) < 0.001)

        // The stop's restart takes effect when the decoding thread flushes what it decoded ahead; until then the
        // ring still holds what followed 0.2 s. Flushes of the first play, if any, are not the stop's.
        while sink.waitForFlush(until: .now()) {}
        let stopped = try #require(service.run(.stop).state)
        #expect(stopped.status == .stopped)
        #expect(stopped.current?.id == ids[0])
        #expect(stopped.position == 0)

        #expect(sink.waitForFlush(until: .now() + 10), "the stop's restart was carried out")
        service.run(.play)
        let heard = try sink.renderAll(frames: 4_410)
        let reference = try Fixtures.referenceFloat("join-1")
        #expect(sampleDifference(heard, Array(reference.prefix(heard.count))) == nil)
        let restarted = await service.waitFor { $0.status == .playing && $0.position > 0 }
        #expect(restarted?.current?.id == ids[0])
    }

    @Test("paused on the second item after playing, `position 1-` then `previous` is Paused on the first item")
    func pausedOnSecondItemThenPrevious() async throws {
        let sink = SteppedSink()
        let service = try ServiceHarness(sink: sink)
        let ids = service.add("id3v24-multi", "join-1", "join-2")
        service.run(.position(2.5, relative: false))
        service.run(.play)
        // The last 0.5 s of the first item, then 1.2 s of the second.
        try sink.render(frames: 22_050 + 52_920, deadline: .now() + 10) { _, _ in }
        _ = await service.waitFor { $0.current?.id == ids[1] && $0.position > 1.1 }
        let paused = try #require(service.run(.pause).state)
        #expect(paused.current?.id == ids[1])
        #expect(abs(paused.position - 1.2) < 0.001)
        let rewound = try #require(service.run(.position(-1, relative: true)).state)
        #expect(rewound.status == .paused)
        #expect(rewound.current?.id == ids[1])
        #expect(abs(rewound.position - 0.2) < 0.001)

        let previous = try #require(service.run(.previous).state)
        #expect(previous.status == .paused)
        #expect(previous.current?.title == "Duet")
        #expect(abs((previous.current?.length ?? 0) - 3.0) < 0.001)
        #expect(previous.position == 0)
        // Once the decoding thread has opened it, the player itself reports the same.
        await service.waitUntilOpened(try #require(previous.current?.id))
        #expect(service.player.currentItem?.metadata.title == "Duet")
        #expect(service.status == previous)
    }

    @Test("a restored queue is Paused at the saved item and position, with its tags, before anything plays")
    func restoredQueue() throws {
        let store = try StateStore()
        do {
            let first = try ServiceHarness(store: store)
            first.add("join-1", "id3v24-multi")
            first.run(.next)
            first.run(.position(2, relative: false))
        }
        let second = try ServiceHarness(store: store)
        #expect(second.controller.restore())
        let status = second.status
        #expect(status.status == .paused)
        #expect(status.current?.title == "Duet")
        #expect(abs(status.position - 2) < 0.001)
        #expect(abs((status.current?.length ?? 0) - 3.0) < 0.001)
    }
}

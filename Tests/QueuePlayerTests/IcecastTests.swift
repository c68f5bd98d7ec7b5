import Foundation
import TestSupport
import Testing

@testable import QueuePlayer

/// Whether `engine` is heard past `time` of its current item within `seconds` (a boundary observer's call, waited for
/// on a thread of its own).
private func heard(_ engine: PlaybackEngine, past time: MediaTime, within seconds: Double = 20) async -> Bool {
    let crossed = DispatchSemaphore(value: 0)
    let token = engine.addBoundaryTimeObserver(forTimes: [time], queue: .global()) { crossed.signal() }
    defer { engine.removeTimeObserver(token) }
    return await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(returning: crossed.wait(timeout: .now() + seconds) == .success)
        }
    }
}

@Suite("Live streams from Debian's Icecast server")
struct IcecastTests {
    @Test("an Icecast mount plays as a live item, and is taken up again at its live edge when its source comes back")
    func sourceComesBack() async throws {
        let icecast = try IcecastServer()
        let tune = Fixtures.mp3("sweep-44k-4s")
        let source = try await IcecastSource(server: icecast, mount: "/radio.mp3", file: tune, name: "QP Radio")
        let engine = playing([icecast.url("/radio.mp3")], on: NullSink(pacing: .unpaced))
        var iterator = engine.events.makeAsyncIterator()
        var started: OpenedEntry?
        while started == nil, let event = await iterator.next() {
            if case .itemStarted(let info) = event { started = info }
        }
        #expect(started?.isLive == true)
        #expect(await heard(engine, past: MediaTime(value: 2, timescale: 1)))

        // The source goes away: Icecast closes the mount and answers 404 until a source is back.
        try await source.stop()
        let returning = try await IcecastSource(server: icecast, mount: "/radio.mp3", file: tune, name: "QP Radio")
        let before = engine.status().elapsed
        #expect(await heard(engine, past: MediaTime(seconds: before + 3, preferredTimescale: 44_100)))
        #expect(engine.queue().count == 1, "the live item is still the one playing")
        engine.shutdown()
        try await returning.stop()
    }
}

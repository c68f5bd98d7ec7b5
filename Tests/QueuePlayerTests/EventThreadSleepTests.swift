import Dispatch
import Foundation
import TestSupport
import Testing

@testable import QueuePlayer

/// The calling thread's id, as `/proc/thread-self` names it.
private func currentThreadID() -> String? {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?.split(separator: "/").last
        .map(String.init)
}

/// The voluntary context switches of this process's thread `id`.
private func voluntarySwitches(ofThread id: String) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/task/\(id)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") })
    else { return nil }
    return Int(line.split(separator: "\t").last ?? "")
}

@Suite("The event thread sleeps until woken")
struct EventThreadSleepTests {
    @Test("while an item plays with no observer and its end is not yet decoded, the event thread does not wake")
    func sleepsWhileDecoding() async throws {
        let engine = PlaybackEngine(sink: NullSink(pacing: .realTime), logger: quietLogger)
        defer { engine.shutdown() }
        // The listener hears the start on the thread that posts it: the engine's event thread.
        let (starts, started) = AsyncStream.makeStream(of: String?.self)
        engine.listen { event in
            if case .itemStarted = event { started.yield(currentThreadID()) }
        }
        engine.enqueue([Fixtures.mp3("stereo-44k-5s")])
        engine.play()
        var heard = starts.makeAsyncIterator()
        let eventThread = try #require(await heard.next() ?? nil, "the event thread's id")
        let before = try #require(voluntarySwitches(ofThread: eventThread))
        // The measurement's window: a second of the item, whose end lies 4 s ahead of what is decoded.
        try await Task.sleep(for: .seconds(1))
        let after = try #require(voluntarySwitches(ofThread: eventThread))
        #expect(after - before <= 2, "the event thread woke \(after - before) times in a second")
    }
}

import Dispatch
import Foundation
import TestSupport
import Testing

@testable import QueuePlayer

/// The voluntary context switches of this process's one thread named `name`, or nil unless exactly one has it.
private func voluntarySwitches(ofThreadNamed name: String) -> Int? {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    let named = tasks.filter { task in
        (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(
            in: .whitespacesAndNewlines) == name
    }
    guard named.count == 1,
        let status = try? String(contentsOfFile: "/proc/self/task/\(named[0])/status", encoding: .utf8),
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
        engine.enqueue([Fixtures.mp3("stereo-44k-5s")])
        engine.play()
        for await event in engine.events {
            if case .itemStarted = event { break }
        }
        let before = try #require(voluntarySwitches(ofThreadNamed: "QP events"), "one engine's event thread")
        // The measurement's window: a second of the item, whose end lies 4 s ahead of what is decoded.
        try await Task.sleep(for: .seconds(1))
        let after = try #require(voluntarySwitches(ofThreadNamed: "QP events"))
        #expect(after - before <= 2, "the event thread woke \(after - before) times in a second")
    }
}

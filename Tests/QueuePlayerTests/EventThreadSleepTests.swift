import Dispatch
import Foundation
import TestSupport
import TestTiers
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

/// True while this process's thread `id` is blocked in a futex wait (a semaphore's, as the event thread's sleep),
/// not running and not waiting for a lock (a `Mutex` waits with `FUTEX_LOCK_PI`).
private func isWaitingOnSemaphore(thread id: String) -> Bool {
    guard let line = try? String(contentsOfFile: "/proc/self/task/\(id)/syscall", encoding: .utf8) else { return false }
    let fields = line.split(separator: " ")
    let futex = "202"
    guard fields.count > 2, fields[0] == futex, let operation = Int(fields[2].dropFirst(2), radix: 16) else {
        return false
    }
    let (wait, waitBitset) = (0, 9)
    return [wait, waitBitset].contains(operation & 0x7f)
}

@Suite("The event thread sleeps until woken", .tier(.deterministic))
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
        engine.enqueue([Fixtures.mp3("long-8k-60s")])
        engine.play()
        var heard = starts.makeAsyncIterator()
        let eventThread = try #require(await heard.next() ?? nil, "the event thread's id")
        // The window opens once the thread has told the start and sleeps. Beside the parallel suites this task may
        // get here seconds into the item: a 5 s item's end was decoded inside the window then, and telling it is a
        // wake-up that is due (seen: 3). The minute-long item's end is decoded 4 s before it is heard.
        let asleepBy = ContinuousClock.now + .seconds(5)
        while !isWaitingOnSemaphore(thread: eventThread), ContinuousClock.now < asleepBy {
            try await Task.sleep(for: .milliseconds(1))
        }
        try #require(isWaitingOnSemaphore(thread: eventThread), "the event thread never went to sleep")
        let before = try #require(voluntarySwitches(ofThread: eventThread))
        // The measurement's window: a second of the item, whose end lies far ahead of what is decoded.
        try await Task.sleep(for: .seconds(1))
        let after = try #require(voluntarySwitches(ofThread: eventThread))
        #expect(after == before, "the event thread woke \(after - before) times in a second")
    }
}

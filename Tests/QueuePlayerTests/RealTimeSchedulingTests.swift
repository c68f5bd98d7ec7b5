import Foundation
import Glibc
import PosixThreads
import TestTiers
import Testing

@testable import QueuePlayer

/// The scheduling class (`SCHED_*`) and real-time priority of this process's thread `task`, read from
/// /proc/self/task/ID/stat (fields 40 and 41, after the command name in parentheses); nil if there is none.
func scheduling(ofThread task: String) -> (policy: Int32, priority: Int)? {
    guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
        let end = stat.lastIndex(of: ")")
    else { return nil }
    // Fields from the third (state) on; the real-time priority is field 40, the policy 41.
    let fields = stat[stat.index(after: end)...].split(separator: " ")
    guard fields.count >= 39, let priority = Int(fields[37]), let policy = Int32(fields[38]) else { return nil }
    return (policy, priority)
}

/// The scheduling of each of this process's threads named `name` (see ``scheduling(ofThread:)``).
func schedulingOfThreads(named name: String) -> [(policy: Int32, priority: Int)] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap { task in
        let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
        return comm.trimmingCharacters(in: .newlines) == name ? scheduling(ofThread: task) : nil
    }
}

/// Whether the sinks ask for `SCHED_FIFO` (not under ThreadSanitizer) and the scheduler grants it to this process at
/// their priority: root here, or an rtprio limit that allows it.
func processMayUseRealTime() -> Bool {
    guard RealTimeScheduling.isAvailable else { return false }
    var parameters = sched_param()
    parameters.sched_priority = 1
    var previous = sched_param()
    let policy = sched_getscheduler(0)
    sched_getparam(0, &previous)
    guard sched_setscheduler(0, SCHED_FIFO, &parameters) == 0 else { return false }
    sched_setscheduler(0, policy, &previous)
    return true
}

@Suite("Render threads ask the scheduler for real-time priority, as audio clients do", .tier(.deterministic))
struct RealTimeSchedulingTests {
    @Test("a real-time null sink renders on a SCHED_FIFO thread where the process may; an unpaced one never does")
    func nullSinkThreads() async throws {
        let format = AudioFormat(sampleRate: 44_100, channelCount: 2)
        for pacing in [NullSink.Pacing.realTime, .unpaced] {
            let sink = NullSink(pacing: pacing)
            // Paused, the thread is parked: it stays there to be read.
            try sink.start(format: format, renderer: Renderer(bufferFrames: 1024), paused: true)
            // The thread tells its id as it starts.
            let startedBy = ContinuousClock.now + .seconds(5)
            while sink.renderThreadID == 0, ContinuousClock.now < startedBy {
                try await Task.sleep(for: .milliseconds(1))
            }
            let thread = sink.renderThreadID
            let found = scheduling(ofThread: String(thread))
            sink.stop()
            let scheduled = try #require(found, "\(pacing): no render thread (id \(thread))")
            if pacing == .realTime, processMayUseRealTime() {
                #expect(scheduled.policy == SCHED_FIFO && scheduled.priority == 4, "\(pacing): \(scheduled)")
            } else {
                #expect(scheduled.policy == SCHED_OTHER, "\(pacing): \(scheduled)")
            }
        }
    }
}

import Dispatch
import Foundation
import Logging
import QueuePlayer
import RealTimeAudit
import TestSupport

/// A child process for the real-time rule's test: plays a queue through one sink while its allocator and locks are
/// counted (RealTimeAudit), exercising playback, seeks, pause and resume, a skip, and joins (one of them across
/// rates), then prints what the audio path did in that window as one JSON object and exits 0. Exits 2 when the
/// audit is not in place (a sanitizer build) or the sink cannot be opened.
///
/// Usage: RenderPathAudit null | RenderPathAudit pulse SERVER_ADDRESS
@main
struct RenderPathAudit {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard audit_is_active() != 0 else { fail("the audit is not in place (built with a sanitizer)") }
        let sink: any AudioSink
        let logger = Logger(label: "audit") { _ in SwiftLogNoOpLogHandler() }
        switch arguments.first {
        case "null" where arguments.count == 1:
            sink = NullSink(pacing: .realTime, outputSampleRate: 44_100)
        case "pulse" where arguments.count == 2:
            do {
                sink = try PulseAudioSink(server: arguments[1], logger: logger)
            } catch {
                fail("cannot open the PulseAudio sink at \(arguments[1]): \(error)")
            }
        default:
            fail("usage: RenderPathAudit null | RenderPathAudit pulse SERVER_ADDRESS")
        }
        let window = await play(through: sink, logger: logger)
        let report: [String: [String: Int]] = [
            "nullSinkThread": window.nullSinkThread.dictionary, "writeCallbacks": window.callbacks.dictionary,
            "libpulseInWriteCallbacks": window.library.dictionary, "eventsThread": window.eventsThread.dictionary,
            "writeCallbackCalls": ["count": window.writeCallbackCalls],
        ]
        do {
            print(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
        } catch {
            fail("cannot encode the report: \(error)")
        }
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("RenderPathAudit: \(message)\n".utf8))
        exit(2)
    }

    /// What was counted between two moments.
    struct Window {
        var nullSinkThread: audit_counts
        var callbacks: audit_counts
        var library: audit_counts
        /// The engine's events thread, which allocates as it posts: evidence that the counting works.
        var eventsThread: audit_counts
        var writeCallbackCalls: Int

        static func - (end: Window, start: Window) -> Window {
            Window(
                nullSinkThread: end.nullSinkThread - start.nullSinkThread, callbacks: end.callbacks - start.callbacks,
                library: end.library - start.library, eventsThread: end.eventsThread - start.eventsThread,
                writeCallbackCalls: end.writeCallbackCalls - start.writeCallbackCalls)
        }
    }

    /// Plays the scenario; returns what was counted from the first item's 0.3 s (after the first renders, which
    /// may instantiate generic metadata once) until the queue finished.
    private static func play(through sink: any AudioSink, logger: Logger) async -> Window {
        let names = ["join-1", "join-2", "join-3", "tone-48k-1s", "join-1"]
        let player = QueuePlayer(
            items: names.map { PlayerItem(url: Fixtures.mp3($0)) }, sink: sink, logger: logger,
            application: Application())
        let (times, timeContinuation) = AsyncStream.makeStream(of: MediaTime.self)
        let observer = player.addPeriodicTimeObserver(
            forInterval: MediaTime(value: 1, timescale: 20), queue: .global()
        ) { timeContinuation.yield($0) }
        let events = player.playbackEvents()
        var timeline = times.makeAsyncIterator()
        player.play()
        await waitUntil(seconds: 0.3, in: &timeline)
        let start = snapshot()
        _ = await player.seek(to: MediaTime(value: 1, timescale: 10))
        await waitUntil(seconds: 0.4, in: &timeline)
        player.pause()
        player.play()
        await waitUntil(seconds: 0.6, in: &timeline)
        player.advanceToNextItem()
        for await event in events where event == .queueFinished { break }
        let end = snapshot()
        player.removeObserver(observer)
        player.shutdown()
        return end - start
    }

    private static func waitUntil(seconds: Double, in timeline: inout AsyncStream<MediaTime>.Iterator) async {
        while let time = await timeline.next(), time.seconds < seconds {}
    }

    private static func snapshot() -> Window {
        Window(
            nullSinkThread: audit_thread_counts("QP null sink"), callbacks: audit_callback_counts(),
            library: audit_callback_library_counts(), eventsThread: audit_thread_counts("QP events"),
            writeCallbackCalls: audit_write_callback_calls())
    }
}

extension audit_counts {
    static func - (lhs: audit_counts, rhs: audit_counts) -> audit_counts {
        audit_counts(
            allocations: lhs.allocations - rhs.allocations, deallocations: lhs.deallocations - rhs.deallocations,
            lockAcquisitions: lhs.lockAcquisitions - rhs.lockAcquisitions, waits: lhs.waits - rhs.waits)
    }

    var dictionary: [String: Int] {
        [
            "allocations": allocations, "deallocations": deallocations, "lockAcquisitions": lockAcquisitions,
            "waits": waits,
        ]
    }
}

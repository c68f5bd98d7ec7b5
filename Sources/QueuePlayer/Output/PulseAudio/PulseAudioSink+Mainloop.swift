import CPulse
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import PosixThreads

// Safety, as for the class (PulseAudioSink.swift): every libpulse object and mutable field here is touched with the
// threaded main loop's lock held, by a method that takes it or by a libpulse callback, which runs with it held.

/// Waiting on the threaded main loop: for an operation, a timer, or a stream to be there.
extension PulseAudioSink {
    /// The main loop as callback userdata, for ``signalOnCompletion``.
    var mainloopPointer: UnsafeMutableRawPointer { UnsafeMutableRawPointer(mainloop) }

    static let signalOnCompletion: pa_stream_success_cb_t = { _, _, mainloop in
        pa_threaded_mainloop_signal(OpaquePointer(mainloop), 0)
    }

    /// Runs `body` on the sink a callback's `userdata` names, without taking a reference to it. A reference taken
    /// here could be the last one (its owner let go meanwhile, on another thread), and the sink would then be freed
    /// on libpulse's thread, where its deinit takes the loop's lock: libpulse aborts. Without one the sink stays
    /// valid through `body`: callbacks run with the loop's lock held, and a deinit takes that lock before it
    /// touches anything.
    static func withSink<T>(_ userdata: UnsafeMutableRawPointer?, _ body: (PulseAudioSink) -> T) -> T {
        Unmanaged<PulseAudioSink>.fromOpaque(userdata!)._withUnsafeGuaranteedRef(body)
    }

    /// Runs `body` with the lock held and a live stream; nil when there is no stream. The stream stays valid
    /// through `body` even if another thread closes it while `body` waits (the lock is released in every wait);
    /// operations on a closed stream fail, and `self.stream` no longer matches it.
    @discardableResult
    func withStream<T>(_ body: (OpaquePointer) -> T) -> T? {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        guard let stream else { return nil }
        pa_stream_ref(stream)
        defer { pa_stream_unref(stream) }
        return body(stream)
    }

    /// Sleeps on a main loop timer (lock held, released while waiting). False when the server went away.
    func sleepOnMainloop(microseconds: pa_usec_t) -> Bool {
        guard let timer = startTimer(microseconds: microseconds) else { return false }
        defer { pa_threaded_mainloop_get_api(mainloop).pointee.time_free(timer) }
        while !timerFired {
            guard cpulse_context_is_good(pa_context_get_state(context)) != 0 else { return false }
            pa_threaded_mainloop_wait(mainloop)
        }
        return true
    }

    /// Arms a timer (lock held) that sets ``timerFired`` and wakes the mainloop's waiters after `microseconds`
    /// (at least 1 ms). The caller frees the returned event.
    func startTimer(microseconds: pa_usec_t) -> OpaquePointer? {
        timerFired = false
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        return pa_context_rttime_new(
            context, pa_rtclock_now() + max(microseconds, 1_000),
            { _, _, _, userdata in
                PulseAudioSink.withSink(userdata) { sink in
                    sink.timerFired = true
                    pa_threaded_mainloop_signal(sink.mainloop, 0)
                }
            }, userdata)
    }

    /// Waits (lock held) until `operation` completes; false when the server went away first.
    @discardableResult
    func waitFor(_ operation: OpaquePointer?) -> Bool {
        waitFor(operation, timeoutMicroseconds: nil) == .done
    }

    /// How waiting for an operation ended.
    enum OperationOutcome {
        case done, failed, timedOut
    }

    /// Waits (lock held) until `operation` completes, the server goes away, or `timeout` microseconds pass (the
    /// operation is then cancelled).
    func waitFor(_ operation: OpaquePointer?, timeoutMicroseconds timeout: pa_usec_t?) -> OperationOutcome {
        guard let operation else { return .failed }
        defer { pa_operation_unref(operation) }
        let timer = timeout.flatMap { startTimer(microseconds: $0) }
        defer { if let timer { pa_threaded_mainloop_get_api(mainloop).pointee.time_free(timer) } }
        while pa_operation_get_state(operation) == PA_OPERATION_RUNNING {
            guard cpulse_context_is_good(pa_context_get_state(context)) != 0 else { return .failed }
            if timer != nil, timerFired {
                pa_operation_cancel(operation)
                return .timedOut
            }
            pa_threaded_mainloop_wait(mainloop)
        }
        return pa_operation_get_state(operation) == PA_OPERATION_DONE ? .done : .failed
    }

    func streamError(_ what: String) -> AudioSinkError {
        let cause = String(cString: pa_strerror(pa_context_errno(context)))
        return AudioSinkError(
            .streamFailed, reason: "\(what) (\(cause))",
            suggestion: "Check the server's sinks with `pactl list short sinks`")
    }
}

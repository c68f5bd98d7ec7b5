import CPulse
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import PosixThreads

// Safety, as for the class (PulseAudioSink.swift): every libpulse object and mutable field here is touched with the
// threaded main loop's lock held, by a method that takes it or by a libpulse callback, which runs with it held.

/// libpulse's callbacks, on the main loop's thread with its lock held: the write callback that renders, and the
/// changes of the context, the stream and the sink they report.
extension PulseAudioSink {
    /// Writes `bytes` of silence (at least 1,024 frames) after what was written: at the end of a stream on PipeWire.
    func writeSilence(bytes: Int) {
        guard let stream else { return }
        let bytesPerFrame = Renderer.channelCount * MemoryLayout<Int16>.size
        var remaining = max(bytes, 1_024 * bytesPerFrame) / bytesPerFrame * bytesPerFrame
        while remaining > 0 {
            var data: UnsafeMutableRawPointer?
            var length = remaining
            guard pa_stream_begin_write(stream, &data, &length) == 0, let data, length >= bytesPerFrame else { return }
            length = length / bytesPerFrame * bytesPerFrame
            data.initializeMemory(as: UInt8.self, repeating: 0, count: length)
            pa_stream_write(stream, data, length, nil, 0, PA_SEEK_RELATIVE)
            remaining -= length
        }
    }

    /// The write callback: renders into libpulse's buffer until the request is met or the stream ends.
    func fill(requestedBytes: Int) {
        guard let stream, let renderer, !stoppedAtEndOfStream else { return }
        defer { keepTiming(stream) }
        let bytesPerFrame = Renderer.channelCount * MemoryLayout<Int16>.size
        var remaining = requestedBytes
        while remaining >= bytesPerFrame {
            var data: UnsafeMutableRawPointer?
            var bytes = remaining
            guard pa_stream_begin_write(stream, &data, &bytes) == 0, let data, bytes >= bytesPerFrame else { return }
            let sampleCount = bytes / bytesPerFrame * Renderer.channelCount
            let samples = UnsafeMutableBufferPointer(
                start: data.bindMemory(to: Int16.self, capacity: sampleCount), count: sampleCount)
            var span = samples.mutableSpan
            let result = renderer.render(into: &span)
            if result.frameCount > 0 {
                pa_stream_write(stream, data, result.frameCount * bytesPerFrame, nil, 0, PA_SEEK_RELATIVE)
            } else {
                pa_stream_cancel_write(stream)
            }
            remaining -= result.frameCount * bytesPerFrame
            if result.reachedEndOfStream {
                stoppedAtEndOfStream = true
                if serverIsPipeWire, result.endOfStreamIsFinal {
                    // PipeWire's server (0.3.65) plays a quantum only once it is full: the end of the stream would
                    // wait a whole quantum (an audible gap) and then be dropped by the drain. Silence completes it.
                    // Not at a restart's end: the server keeps silence written around a flush, and plays it first.
                    writeSilence(bytes: Int(pa_stream_get_buffer_attr(stream)?.pointee.minreq ?? 0))
                }
                return
            }
        }
    }

    /// Copies libpulse's timing for the stream (what was written, and the server's latest report) into
    /// ``lastTiming`` after each write and each report, so that when the server goes away the copy says how much
    /// of what was written had been heard. (A copy taken only when the latency was last read missed what was
    /// written since: the position resumed up to a write ahead, 100 ms and more skipped at a restart.) A struct
    /// copy: nothing allocates. Lock held.
    func keepTiming(_ stream: OpaquePointer) {
        guard lostAt == nil, !failureReported, let timing = pa_stream_get_timing_info(stream) else { return }
        lastTiming = timing.pointee
    }

    /// A timing report arrived: kept, the timing handler told, and a change of suspension waiting for it is told.
    /// Lock held.
    func timingReported(_ stream: OpaquePointer) {
        keepTiming(stream)
        timingHandler?()
        if !failureReported, let suspended = suspensionAwaitingReport {
            suspensionAwaitingReport = nil
            if !suspended {
                isSuspended = false
                suspendedAt = nil
            }
            suspensionHandler?(suspended)
        }
    }

    /// The server started playing the stream (its prebuffer was full, or it had run dry and was refilled): until a
    /// report says so, the listener's position stands still, so one is asked for now rather than at the next tick of
    /// the timing timer. Lock held.
    func streamStarted(_ stream: OpaquePointer) {
        guard lostAt == nil, !failureReported else { return }
        requestFreshTiming(stream)
    }

    func contextStateChanged() {
        pa_threaded_mainloop_signal(mainloop, 0)
        let state = pa_context_get_state(context)
        if wasReady, cpulse_context_is_good(state) == 0 {
            reportFailure(
                AudioSinkError(
                    .serverDisconnected,
                    reason: "the PulseAudio server at \(Self.describe(serverAddress)) went away "
                        + "(\(String(cString: pa_strerror(pa_context_errno(context)))))",
                    suggestion: "Playback goes on where it stopped once the server answers again"))
        }
    }

    func streamStateChanged() {
        pa_threaded_mainloop_signal(mainloop, 0)
        guard let stream, pa_stream_get_state(stream) == PA_STREAM_FAILED else { return }
        reportFailure(streamError("the PulseAudio playback stream failed"))
    }

    /// The sink the stream plays on was suspended or resumed by the server. The position stands still while it is
    /// suspended: until a report taken after the suspension arrives, the last one is carried forward to the moment it
    /// was seen, and no further. The handler hears of a change with the first report taken after it (see
    /// ``timingReported(_:)``), so that a position read then is where the listener stands.
    func suspensionChanged() {
        guard let stream else { return }
        let suspended = pa_stream_is_suspended(stream) == 1
        guard suspended != (suspensionAwaitingReport ?? isSuspended) else { return }
        if suspended {
            isSuspended = true
            var now = timeval()
            gettimeofday(&now, nil)
            suspendedAt = now
        }
        // Resumed: the position stands where it stood until the fresh report, which counts from the resumption.
        suspensionAwaitingReport = suspended
        requestFreshTiming(stream)
        if !suspended, !isCorked { scheduleTimingRequests() }
    }

    static func isEarlier(_ time: timeval, than other: timeval) -> Bool {
        (time.tv_sec, time.tv_usec) < (other.tv_sec, other.tv_usec)
    }

    /// The server moved the stream to another sink (the user picked another output, or the old one went away): it
    /// plays on there, converted by the server if that sink's rate differs; only whether that sink is suspended
    /// matters here. (Nothing is logged on libpulse's thread, which is the render thread.)
    func streamMoved() {
        suspensionChanged()
    }

    /// Tells the failure handler once per connection (the engine logs it).
    func reportFailure(_ error: AudioSinkError) {
        guard !failureReported else { return }
        failureReported = true
        if isCorked {
            lostAt = nil
        } else {
            var noticed = timeval()
            gettimeofday(&noticed, nil)
            lostAt = noticed
        }
        failureHandler?(error)
    }
}

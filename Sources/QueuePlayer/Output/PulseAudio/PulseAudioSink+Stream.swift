import CPulse
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import PosixThreads

// Safety, as for the class (PulseAudioSink.swift): every libpulse object and mutable field here is touched with the
// threaded main loop's lock held, by a method that takes it or by a libpulse callback, which runs with it held.

/// The stream: opened, paused, flushed, drained, resumed after an end, its volume, and closed (`AudioSink`).
extension PulseAudioSink {
    /// The default sink's rate, as read when the server was last reached (nil before that): every item plays at it,
    /// so that items of any rate join in one stream, and the server resamples nothing. Any thread but libpulse's;
    /// while the first connection is being made, waits for it (milliseconds).
    public var outputSampleRate: Int? {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        awaitFirstConnection()
        return sinkSampleRate
    }

    /// Opens an s16 playback stream in `format` (stopping any previous one) and waits until it is ready. A stream
    /// opened `paused` starts corked, so nothing is heard before ``setPaused(_:)``; an uncorked one starts once the
    /// server holds its prebuffer. Throws ``AudioSinkError/Code/streamFailed`` naming the format when the server
    /// refuses it.
    public func start(format: AudioFormat, renderer: Renderer, paused: Bool) throws(AudioSinkError) {
        stop()
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        awaitFirstConnection()
        guard pa_context_get_state(context) == PA_CONTEXT_READY else { throw unreachableError() }
        // A failure is told once per stream, not once per connection: after a stream the server killed (or one
        // PipeWire failed while starting up), the server going away must still be told.
        failureReported = false
        var spec = pa_sample_spec(
            format: PA_SAMPLE_S16LE, rate: UInt32(format.sampleRate), channels: UInt8(format.channelCount))
        guard let stream = pa_stream_new(context, "QueuePlayer", &spec, nil) else {
            throw streamError("PulseAudio refused a \(format) stream")
        }
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        pa_stream_set_state_callback(
            stream,
            { _, userdata in
                PulseAudioSink.withSink(userdata) { $0.streamStateChanged() }
            }, userdata)
        pa_stream_set_write_callback(
            stream,
            { _, bytes, userdata in
                PulseAudioSink.withSink(userdata) { $0.fill(requestedBytes: bytes) }
            }, userdata)
        pa_stream_set_suspended_callback(
            stream,
            { _, userdata in
                PulseAudioSink.withSink(userdata) { $0.suspensionChanged() }
            }, userdata)
        pa_stream_set_moved_callback(
            stream,
            { _, userdata in
                PulseAudioSink.withSink(userdata) { $0.streamMoved() }
            }, userdata)
        pa_stream_set_latency_update_callback(
            stream,
            { stream, userdata in
                PulseAudioSink.withSink(userdata) { $0.timingReported(stream!) }
            }, userdata)
        pa_stream_set_started_callback(
            stream,
            { stream, userdata in
                PulseAudioSink.withSink(userdata) { $0.streamStarted(stream!) }
            }, userdata)
        self.stream = stream
        isSuspended = false
        suspendedAt = nil
        suspensionAwaitingReport = nil
        self.renderer = renderer
        self.format = format
        stoppedAtEndOfStream = false
        isCorked = paused
        lostAt = nil
        lastTiming = nil
        heardFrame.reset()
        let buffering = serverIsPipeWire ? Self.pipeWireBuffering : Self.pulseAudioBuffering
        let bytesPerFrame = UInt32(format.channelCount * MemoryLayout<Int16>.size)
        let targetBytes = UInt32(format.sampleRate * buffering.targetMilliseconds / 1000) * bytesPerFrame
        let requestBytes = UInt32(format.sampleRate * buffering.requestMilliseconds / 1000) * bytesPerFrame
        var attributes = pa_buffer_attr(
            maxlength: .max, tlength: targetBytes, prebuf: .max, minreq: requestBytes, fragsize: .max)
        renderer.appliesGain = !appliesGainInServer
        var volume = streamVolume(channelCount: format.channelCount)
        // PipeWire's server keeps libpulse's automatic timing updates (see ``scheduleTimingRequests()``).
        let automaticTiming = serverIsPipeWire ? PA_STREAM_AUTO_TIMING_UPDATE.rawValue : 0
        let flags = pa_stream_flags_t(
            rawValue: PA_STREAM_ADJUST_LATENCY.rawValue | automaticTiming
                | (paused ? PA_STREAM_START_CORKED.rawValue : 0))
        let connected = appliesGainInServer
            ? pa_stream_connect_playback(stream, nil, &attributes, flags, &volume, nil)
            : pa_stream_connect_playback(stream, nil, &attributes, flags, nil, nil)
        guard connected >= 0 else {
            throw streamError("PulseAudio refused to connect the playback stream")
        }
        // Another thread may close the stream while the lock is released in the wait (the event thread stops the
        // sink when the server goes away): the reference keeps it valid until the loop has seen that.
        pa_stream_ref(stream)
        defer { pa_stream_unref(stream) }
        while true {
            guard self.stream == stream else { throw unreachableError() }
            let state = pa_stream_get_state(stream)
            if state == PA_STREAM_READY { break }
            if cpulse_stream_is_good(state) == 0 {
                throw streamError("the PulseAudio playback stream failed to start")
            }
            pa_threaded_mainloop_wait(mainloop)
        }
        if !serverIsPipeWire {
            // The first report says how much of what is written while corked (the prebuffer) is still unheard.
            requestFreshTiming(stream)
            if !paused { scheduleTimingRequests() }
        }
        logger.debug("PulseAudio stream ready", metadata: ["format": "\(format)"])
    }

    /// On PulseAudio, sets the stream's volume in the server (now, for what it holds too, and for every stream
    /// opened later); elsewhere only remembers it, as the renderer applies it. Does not wait for the server. Any
    /// thread but libpulse's.
    public func setGain(_ gain: Float) {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        self.gain = max(0, gain)
        guard appliesGainInServer, let stream, let format, pa_stream_get_state(stream) == PA_STREAM_READY else {
            return
        }
        var volume = streamVolume(channelCount: format.channelCount)
        let operation = pa_context_set_sink_input_volume(context, pa_stream_get_index(stream), &volume, nil, nil)
        if let operation { pa_operation_unref(operation) }
    }

    /// ``gain`` as a volume for every channel of the stream. Lock held.
    func streamVolume(channelCount: Int) -> pa_cvolume {
        var volume = pa_cvolume()
        pa_cvolume_set(&volume, UInt32(channelCount), pa_sw_volume_from_linear(Double(gain)))
        return volume
    }

    /// Corks or uncorks the stream and waits for the server to confirm. Nothing buffered is lost.
    public func setPaused(_ paused: Bool) {
        withStream { stream in
            isCorked = paused
            waitFor(pa_stream_cork(stream, paused ? 1 : 0, Self.signalOnCompletion, mainloopPointer))
            refreshTiming(stream)
            if paused { cancelTimingRequests() } else { scheduleTimingRequests() }
        }
    }

    /// Drops what the server holds for this stream and waits for the server to confirm. A playing stream is corked
    /// around the flush and uncorked after it: flushing a stream the server is reading races its reads (mpv:
    /// "pa_stream_flush() works badly if not corked"), and PipeWire's server leaves a flushed stream inactive
    /// until it is uncorked (MPD#1219). A paused stream stays corked.
    public func flush() {
        _ = flushCountingDroppedFrames()
    }

    /// As ``flush()``, and counts what was dropped: what was written before it, less what the server kept (after a
    /// flush it moves the stream's write index back to its read index). Nil when either index is unknown, or the
    /// server went away. Any thread but libpulse's; takes the main loop's lock and waits for the server's answers.
    public func flushCountingDroppedFrames() -> Int? {
        let dropped = withStream { stream -> Int? in
            let wasCorked = isCorked
            if !wasCorked { waitFor(pa_stream_cork(stream, 1, Self.signalOnCompletion, mainloopPointer)) }
            let written = reportedWriteIndex(stream)
            let flushed = waitFor(pa_stream_flush(stream, Self.signalOnCompletion, mainloopPointer))
            refreshTiming(stream)
            let kept = reportedWriteIndex(stream)
            if !wasCorked {
                waitFor(pa_stream_cork(stream, 0, Self.signalOnCompletion, mainloopPointer))
                refreshTiming(stream)
                scheduleTimingRequests()
            }
            guard flushed, let written, let kept else { return nil }
            return Int(max(0, written - kept)) / (Renderer.channelCount * MemoryLayout<Int16>.size)
        }
        return dropped ?? nil
    }

    /// The stream's write index in bytes, as libpulse keeps it (it counts each write, and takes the server's after a
    /// flush once a timing report has come): nil while it is not known. Lock held.
    private func reportedWriteIndex(_ stream: OpaquePointer) -> Int64? {
        guard let timing = pa_stream_get_timing_info(stream)?.pointee, timing.write_index_corrupt == 0 else {
            return nil
        }
        return timing.write_index
    }

    /// True: the server's buffer for the stream is thrown away.
    public var flushDropsUnplayedFrames: Bool { true }

    /// Waits until the server has read every byte of the stream and its sink has played them, then confirms with
    /// `pa_stream_drain`. Servers whose sink never rewinds (a null sink with `norewinds=1`, as used to record the
    /// monitor) acknowledge a drain only once the stream buffer is already empty, so emptiness is awaited first,
    /// from the stream's timing information, on main loop timers. A corked stream waits until it is uncorked.
    public func drain() throws(AudioSinkError) {
        let completed = withStream { stream -> Bool in
            var lastReadIndex: Int64 = -1
            var buffered: pa_usec_t = 0
            var margin = Self.drainMarginMicroseconds
            while true {
                guard waitFor(pa_stream_update_timing_info(stream, Self.signalOnCompletion, mainloopPointer)),
                    self.stream == stream
                else { return self.stream != stream }
                guard let timing = pa_stream_get_timing_info(stream)?.pointee, let format else { return false }
                let bytesPerSecond = Int64(format.sampleRate * format.channelCount * MemoryLayout<Int16>.size)
                let unread = timing.write_index - timing.read_index
                buffered = pa_usec_t(max(0, unread) * 1_000_000 / bytesPerSecond) + timing.sink_usec
                if unread <= 0 { break }
                // PipeWire's server leaves the last part of a quantum unread (the silence written after the end,
                // see ``fill(requestedBytes:)``), and PulseAudio at times a few frames, then acknowledges the drain
                // only on its margin (a 250 ms gap at a change of rate): once reading stops moving, what was read
                // is heard within the sink's latency, and the drain settles soon after.
                if timing.read_index == lastReadIndex {
                    margin = Self.stalledDrainMarginMicroseconds
                    break
                }
                lastReadIndex = timing.read_index
                guard sleepOnMainloop(microseconds: min(pa_usec_t(unread * 1_000_000 / bytesPerSecond), 100_000))
                else { return false }
                guard self.stream == stream else { return true }
            }
            let drained = pa_stream_drain(stream, Self.signalOnCompletion, mainloopPointer)
            switch waitFor(drained, timeoutMicroseconds: buffered + margin) {
            case .done: return true
            case .failed: return self.stream != stream
            case .timedOut:
                // Never acknowledged (PipeWire 0.3.65 may not answer a drain): everything buffered has had its time
                // to be heard, by the stream's own timing.
                return true
            }
        }
        if completed == false {
            throw AudioSinkError(
                .serverDisconnected, reason: "PulseAudio at \(Self.describe(serverAddress)) went away while draining",
                suggestion: "Restart the server and play the item again")
        }
    }

    /// Writes what the renderer now has and triggers playback, after the stream ran dry at an end of stream.
    public func resumeAfterEndOfStream() {
        withStream { stream in
            guard stoppedAtEndOfStream else { return }
            stoppedAtEndOfStream = false
            let writable = pa_stream_writable_size(stream)
            if writable > 0, writable != .max {
                fill(requestedBytes: writable)
            }
            waitFor(pa_stream_trigger(stream, Self.signalOnCompletion, mainloopPointer))
            if !isCorked { scheduleTimingRequests() }
        }
    }

    /// Disconnects the stream. Once this returns, no render call is made. The server connection stays open.
    public func stop() {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        closeStream()
    }

    /// Disconnects and releases the stream, if any. Lock held.
    func closeStream() {
        guard let stream else { return }
        cancelTimingRequests()
        pa_stream_set_write_callback(stream, nil, nil)
        pa_stream_set_state_callback(stream, nil, nil)
        pa_stream_set_suspended_callback(stream, nil, nil)
        pa_stream_set_moved_callback(stream, nil, nil)
        pa_stream_set_latency_update_callback(stream, nil, nil)
        pa_stream_set_started_callback(stream, nil, nil)
        pa_stream_disconnect(stream)
        pa_stream_unref(stream)
        self.stream = nil
        renderer = nil
    }

    /// The handler runs on libpulse's thread with its lock held: it must hand the error on, not call the sink.
    public func setFailureHandler(_ handler: @escaping @Sendable (AudioSinkError) -> Void) {
        pa_threaded_mainloop_lock(mainloop)
        failureHandler = handler
        pa_threaded_mainloop_unlock(mainloop)
    }

    /// The handler runs on libpulse's thread with its lock held: it must hand the news on, not call the sink.
    public func setSuspensionHandler(_ handler: @escaping @Sendable (Bool) -> Void) {
        pa_threaded_mainloop_lock(mainloop)
        suspensionHandler = handler
        pa_threaded_mainloop_unlock(mainloop)
    }

    /// The handler is told of every timing report, on libpulse's thread with its lock held: it must hand the news
    /// on, not call the sink.
    public func setTimingHandler(_ handler: @escaping @Sendable () -> Void) {
        pa_threaded_mainloop_lock(mainloop)
        timingHandler = handler
        pa_threaded_mainloop_unlock(mainloop)
    }
}

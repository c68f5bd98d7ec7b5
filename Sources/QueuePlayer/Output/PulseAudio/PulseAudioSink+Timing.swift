import CPulse
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import PosixThreads

// Safety, as for the class (PulseAudioSink.swift): every libpulse object and mutable field here is touched with the
// threaded main loop's lock held, by a method that takes it or by a libpulse callback, which runs with it held.

/// What is heard: the latency from the stream's timing reports, and the timer that keeps them fresh.
extension PulseAudioSink {
    /// Frames written but not yet heard, from the stream's latest timing report carried forward to now (see
    /// `StreamTimingReport`); 0 before the first report or with no stream. While corked, the frames not yet read,
    /// so that the paused position is the one play resumes from and stands still. The frame heard never moves back
    /// between two changes of the stream (`MonotonicHeardFrame`). A report older than
    /// `timingRefreshMicroseconds` is renewed in the background, so that the sink's own clock rate (which may
    /// differ from the nominal rate by 100 ppm) never accumulates.
    ///
    /// libpulse's own `pa_stream_get_latency` is not used: it smooths and refreshes on its own only every 1.5 s,
    /// and on the null sink it read 0.2–0.4 ms late against the monitor recording (`scripts/audible-time`).
    public func latencyFrames() -> Int {
        withStream { stream in
            if lostAt == nil {
                requestFreshTimingIfStale(stream)
                // Kept: once the server is gone, libpulse has no timing for the stream, and the last report is
                // what tells how much of what was written had been heard.
                lastTiming = pa_stream_get_timing_info(stream)?.pointee
            }
            guard let timing = lastTiming, let format, timing.write_index_corrupt == 0, timing.read_index_corrupt == 0
            else { return 0 }
            let bytesPerFrame = Int64(format.channelCount * MemoryLayout<Int16>.size)
            let reportPredatesSuspension = suspendedAt.map { Self.isEarlier(timing.timestamp, than: $0) } ?? false
            let report = StreamTimingReport(
                writtenFrames: timing.write_index / bytesPerFrame, readFrames: timing.read_index / bytesPerFrame,
                // Corked, the stream is read no further, and play resumes with the first frame not read: that is
                // the frame heard while paused. The sink's own queue (played out or rewound) is no longer this
                // stream's, and its latency, which moves with the sink's cycle, would move the paused position.
                sinkMicroseconds: isCorked ? 0 : Int64(timing.sink_usec),
                isAdvancing: timing.playing != 0 && !isCorked && (!isSuspended || reportPredatesSuspension))
            var now = timeval()
            if let lostAt {
                now = lostAt
            } else if reportPredatesSuspension, let suspendedAt {
                now = suspendedAt
            } else {
                gettimeofday(&now, nil)
            }
            let age =
                Int64(now.tv_sec - timing.timestamp.tv_sec) * 1_000_000 + Int64(now.tv_usec - timing.timestamp.tv_usec)
            return heardFrame.latencyFrames(report, reportAgeMicroseconds: age, rate: format.sampleRate)
        } ?? 0
    }

    /// Asks for a timing report without waiting, if the last request is older than ``timingRefreshMicroseconds``.
    /// Lock held.
    func requestFreshTimingIfStale(_ stream: OpaquePointer) {
        guard pa_rtclock_now() &- lastTimingRequest >= Self.timingRefreshMicroseconds else { return }
        requestFreshTiming(stream)
    }

    /// Asks for a timing report without waiting. Lock held.
    func requestFreshTiming(_ stream: OpaquePointer) {
        lastTimingRequest = pa_rtclock_now()
        if let operation = pa_stream_update_timing_info(stream, nil, nil) {
            pa_operation_unref(operation)
        }
    }

    /// Waits for a timing report taken after everything asked of the server so far (a cork, a flush), so that no
    /// later read carries an older report across the change. Lock held.
    func refreshTiming(_ stream: OpaquePointer) {
        heardFrame.reset()
        lastTimingRequest = pa_rtclock_now()
        waitFor(pa_stream_update_timing_info(stream, Self.signalOnCompletion, mainloopPointer))
    }

    /// The age at which a timing report is renewed while the latency is being read.
    static let timingRefreshMicroseconds: pa_usec_t = 500_000

    /// While the stream plays, timing reports are asked for on a main loop timer: ``firstTimingInterval`` after a
    /// start, an uncork, a flush or a restart after running dry, doubling up to ``longestTimingInterval``, so that
    /// the position settles quickly after a change and the sink's clock never drifts far from a report. This is
    /// what libpulse's `PA_STREAM_AUTO_TIMING_UPDATE` does, except that it also asks while the stream is corked,
    /// which woke a paused daemon's libpulse thread about twice a second for nothing.
    ///
    /// On PipeWire's server (0.3.65) the automatic updates stay, for now: its stack stopped answering every client
    /// in 2 of 4 restart tests with these requests (wireplumber: the stream never linked), which made them suspect;
    /// but the same wedge came later with the automatic updates too, and in a run from before this timer existed, so
    /// it is the stack's own (see scripts/pipewire-server). Using the timer there as well is left to try. Lock held.
    func scheduleTimingRequests() {
        guard !serverIsPipeWire else { return }
        timingInterval = Self.firstTimingInterval
        if let timingTimer {
            pa_context_rttime_restart(context, timingTimer, pa_rtclock_now() + timingInterval)
            return
        }
        timingTimer = pa_context_rttime_new(
            context, pa_rtclock_now() + timingInterval,
            { _, _, _, userdata in
                PulseAudioSink.withSink(userdata) { $0.timingTimerFired() }
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Stops asking for timing reports (corked, or the stream closed). Lock held.
    func cancelTimingRequests() {
        guard let timingTimer else { return }
        pa_threaded_mainloop_get_api(mainloop).pointee.time_free(timingTimer)
        self.timingTimer = nil
    }

    /// The timing timer fired, on libpulse's thread, lock held: asks for a report and re-arms with a doubled period.
    func timingTimerFired() {
        guard let stream, let timingTimer, !isCorked, lostAt == nil, !failureReported else {
            cancelTimingRequests()
            return
        }
        requestFreshTiming(stream)
        timingInterval = min(timingInterval * 2, Self.longestTimingInterval)
        pa_context_rttime_restart(context, timingTimer, pa_rtclock_now() + timingInterval)
    }

    /// The first period of the timing timer after a change (libpulse's automatic updates start at 10 ms too).
    static let firstTimingInterval: pa_usec_t = 10_000

    /// The longest period of the timing timer: at 100 ppm of clock difference, a report carried forward this long
    /// is off by 0.1 ms.
    static let longestTimingInterval: pa_usec_t = 1_000_000

    /// How long past the stream's buffered time a drain may go unacknowledged before it is settled from the stream's
    /// own timing (PipeWire's pulse server, 0.3.65, may never acknowledge one).
    static let drainMarginMicroseconds: pa_usec_t = 250_000

    /// The same margin once the server has stopped reading the stream short of its end: what it read is heard within
    /// the sink's latency, which `buffered` already counts.
    static let stalledDrainMarginMicroseconds: pa_usec_t = 20_000
}

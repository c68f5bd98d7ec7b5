import Dispatch

extension PlaybackEngine {
    /// The event thread: follows the audible position and posts the events that fall due, in order. When the
    /// queue has been decoded and heard, it drains the sink and posts ``PlaybackEvent/queueFinished``.
    func runEvents() {
        var previousAudible = -1
        /// When the audible estimate last moved.
        var movedAt = DispatchTime.now()
        var backoff = ReconnectBackoff()
        /// What was last posted about the device's suspension: a suspension that ended before it was posted is not
        /// posted at all.
        var postedSuspension = false
        while !isShuttingDown {
            if recoverOutputIfLost(&backoff) { continue }
            let suspended = state.withLock { $0.outputIsSuspended }
            if suspended != postedSuspension {
                postedSuspension = suspended
                logger.notice(
                    suspended
                        ? "the sound server suspended the output device; playback waits where it stands"
                        : "the output device plays again; playback goes on where it stood",
                    metadata: ["output": "\(sink.name)"])
                post(suspended ? .outputSuspended : .outputResumed)
            }
            let audible = audibleFrame()
            let now = DispatchTime.now()
            if audible != previousAudible { movedAt = now }
            defer { previousAudible = audible }
            let (due, nextFrame, nextObserverFrame, queueDone) = state.withLock { state in
                let due = state.dueDeliveries(audibleFrame: audible)
                return (due, state.timeline.nextEventFrame, state.nextObserverFrame, state.queueIsDone)
            }
            due.forEach(carryOut)
            if queueDone {
                finishQueue()
                continue
            }
            if let nextFrame, renderer.hasRenderedEverything, nextFrame <= renderer.position.read().ringFrames,
                nextObserverFrame.map({ $0 > nextFrame }) ?? true || audible == previousAudible
            {
                // All that is due is in the sink's buffer and nothing follows it. A sink that has run dry may stop
                // updating its latency, so ask it to confirm the end instead of estimating it; but not while an
                // observer time before the end is still to come (the drain would delay it), unless the estimate
                // has stopped moving.
                // A failed drain means the output was lost: the next turn recovers it.
                _ = drainOutput()
                continue
            }
            waitForAudibleFrame(
                [nextFrame, nextObserverFrame].compactMap { $0 }.min(), audible: audible,
                stillForNanoseconds: now.uptimeNanoseconds - movedAt.uptimeNanoseconds)
        }
    }

    /// Sleeps until ring frame `frame` is likely to be audible. With nothing queued, or paused (unless the sink
    /// plays out what it holds) or suspended (no frame is heard until play), it sleeps until woken: every change
    /// that can make something due wakes it (an item opened, ended or failed, a restart, an observer added, play, a
    /// suspension change, a lost output, shutdown). An idle daemon wakes for nothing. `audible` is the estimate just
    /// read, which has not moved for `stillForNanoseconds`.
    private func waitForAudibleFrame(_ frame: Int?, audible: Int, stillForNanoseconds: UInt64) {
        let playsOut = sink.playsOutWhilePaused
        let isHeld = state.withLock {
            ($0.phase == .paused && !playsOut) || $0.phase == .buffering || $0.outputIsSuspended
        }
        guard let frame else {
            // Nothing is due before the item being decoded ends, and its end is not known yet: the decoding thread
            // wakes this one when it is (or when the item fails, the next one opens, or the queue is written out).
            renderer.waitUntilRendered(ringFrame: .max, timeout: Self.untilWoken)
            return
        }
        let rendered = renderer.position.read().ringFrames
        if rendered < frame {
            // The render that reaches `frame` wakes it (as does every change above); a timeout would only wake it
            // to look again (4 times a second while waiting for the next second's observer time, before).
            renderer.waitUntilRendered(ringFrame: frame, timeout: Self.untilWoken)
            return
        }
        // Rendered but still in the sink's buffer: sleep for the part of the latency that is left. Paused or
        // suspended, none of it is heard until play: waiting what is left of the latency, a few frames, over and
        // over, spun at 336 wake-ups a second. (A sink that plays out while paused hears all it holds: `frame` is
        // then reached, or the next one is beyond what was rendered and waits for a render above.)
        guard !isHeld else {
            renderer.waitUntilRendered(ringFrame: .max, timeout: Self.untilWoken)
            return
        }
        let rate = status().current?.format.sampleRate ?? 44_100
        if stillForNanoseconds >= UInt64(2 * 1_000_000_000 / rate) {
            waitForTimingReport(unlessMovedFrom: audible)
            return
        }
        // At most a second: a later timing report may have moved the estimate (the sink's buffer holds 0.3 s).
        let framesLeft = max(1, frame - audibleFrame())
        let wait = min(1_000_000, framesLeft * 1_000_000 / rate)
        renderer.waitUntilRendered(ringFrame: .max, timeout: .now() + .microseconds(wait))
    }

    /// The estimate stood still for two frames' time while playing: the sink is not carrying its latency forward in
    /// time (a stream still filling its prebuffer, or not yet reported playing), so a wait on the clock would wake
    /// every few microseconds for nothing (300 times at each start, measured). Sleeps until the sink's next timing
    /// report, or any change that wakes the thread; a sink that never reports is looked at again after
    /// ``stalledEstimateTimeout``.
    private func waitForTimingReport(unlessMovedFrom audible: Int) {
        // Asked for before looking again: a report that lands between the look and the wait still wakes it.
        timingReportAwaited.store(true, ordering: .sequentiallyConsistent)
        if audibleFrame() == audible {
            renderer.waitUntilRendered(ringFrame: .max, timeout: .now() + Self.stalledEstimateTimeout)
        }
        timingReportAwaited.store(false, ordering: .releasing)
    }

    /// How long a standing estimate waits for a timing report before it is looked at again anyway.
    static let stalledEstimateTimeout = DispatchTimeInterval.milliseconds(50)

    /// A timing report from the sink: wakes the event thread if it waits for one.
    func timingReported() {
        if timingReportAwaited.exchange(false, ordering: .acquiringAndReleasing) {
            renderer.wakeProgressWaiter()
        }
    }

    /// What the event thread hands out, in the order it was heard.
    enum Delivery {
        /// An event for ``events`` (and the listener).
        case event(PlaybackEvent)
        /// A time for an observer, in an entry.
        case time(TimeObserver, MediaTime, QueueEntry)
    }

    private func carryOut(_ delivery: Delivery) {
        switch delivery {
        case .event(let event): post(event)
        case .time(let observer, let time, let entry): observer.deliver(time, in: entry)
        }
    }

    private func finishQueue() {
        guard drainOutput() else { return }
        if state.withLock({ $0.takeQueueFinished() }) {
            post(.queueFinished)
        }
    }
}

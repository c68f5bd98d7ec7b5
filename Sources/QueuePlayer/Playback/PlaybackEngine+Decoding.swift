import Dispatch
import FoundationEssentials
import PosixThreads

extension PlaybackEngine {
    /// Once the ring is full, the decoding thread sleeps until half of it is free, then fills it again: it wakes
    /// every 0.37 s with the default ring, and each time decodes about 14 MP3 frames with libmpg123's tables still
    /// in the cache. (Woken for every 4,096 frames, 11 times a second, it spent 47 ms on 30 s of playing where
    /// decoding them at once takes 20.) Half a ring still decoded ahead, plus the sink's own buffer, covers a slow
    /// disk.
    var refillFrames: Int { renderer.ring.capacity / Renderer.channelCount / 2 }

    /// The most frames one write publishes once the stream is under way: a refill is published as it goes, so that
    /// a sink that has drained the ring (an unpaced one) does not wait for the whole refill. The first write after
    /// the stream's end was marked (a start, a restart) fills all it can, because the sink resumes after it: a
    /// server asks for its whole buffer at once, and a smaller first write was heard as a gap.
    static let writeFrames = 4096
    /// How long the decoding and event threads wait when nothing can change until someone wakes them: for ever.
    /// Every change they wait for signals a semaphore, whose count keeps a signal that comes before the wait, so
    /// no wake-up is lost; an idle daemon does not look again on a timer (the "nothing polls").
    static let untilWoken = DispatchTime.distantFuture

    /// The decoding thread: opens each queued item in turn and writes its frames into the ring, opening or
    /// reopening the sink when the format changes, and carries out skips and seeks. Blocks on file I/O and on a
    /// full ring; never on the sink's render thread. Every change of the engine's state is a transition of
    /// ``State`` (EngineState+Threads.swift).
    func runDecoding() {
        var stream = StreamProgress()
        while !isShuttingDown {
            switch state.withLock({ $0.nextDecoderStep() }) {
            case .waitForOutput:
                decoderWake.wait()
            case .restart(let replaced, let reopensOutput, let continuedFrame, let number):
                // A restart taken but not yet carried out is replaced: its seeks did not finish.
                replaced.forEach { $0(false) }
                dropDecodedAhead(continuing: continuedFrame, restartNumber: number)
                stream.endIsMarked = true
                stream.fillGoesOn = false
                if reopensOutput {
                    // The output was reconnected: the old stream is gone.
                    stream.format = nil
                }
            case .cut(let frame, let number):
                let done = renderer.truncate(atRingFrame: frame)
                state.withLock { $0.cutDecodedAhead(atRingFrame: frame, restartNumber: number, done: done) }
                // The event thread may wait for a frame of what was taken back.
                renderer.wakeProgressWaiter()
                restartCarriedOut.signal()
            case .finishWriting:
                // Nothing more is coming to wait for.
                endBufferingIfReady(nil)
                markFinalEnd(of: &stream)
                let (isIdle, unfinished) = state.withLock { $0.settleIdle() }
                unfinished.forEach { $0(false) }
                renderer.wakeProgressWaiter()
                if isIdle { decoderWake.wait() }
            case .open(let entry, let led):
                play(entry, from: led, stream: &stream)
            }
        }
    }

    /// The context the decoding thread opens `entry` in: a wait for a remote item's bytes sleeps on ``decoderWake``
    /// and ends when a skip, seek or edit has set up a restart, or the engine shuts down (both wake it); while the
    /// output plays, a wait that outlasts what is left to hear is a stall.
    private func decodingContext(for entry: QueueEntry) -> DecoderContext {
        DecoderContext(
            logger: logger, wake: decoderWake,
            isInterrupted: { [weak self] in
                self?.state.withLock { $0.phase.isFinal || $0.waitingRestart != nil } ?? true
            },
            framesLeftToHear: { [weak self] in self?.framesLeftToHear() },
            stalled: { [weak self] in self?.stalled(entry) },
            connectionChanged: { [weak self] loss in
                self?.connectionChanged(entry, loss)
            },
            hasItemAfter: { [weak self] in self?.state.withLock { !$0.pending.isEmpty } ?? false })
    }

    /// The stream the decoding thread writes into: its format (nil before the first item, or once it was closed),
    /// and whether its end is marked (the sink is told when frames follow again).
    private struct StreamProgress {
        var format: AudioFormat?
        var endIsMarked = true
        /// An item ended before the fill after a start or restart was done, and the next item (a file) goes on
        /// filling: the sink waits, and an end marked before it resumes must resume it to be heard.
        var fillGoesOn = false
    }

    /// Opens `entry` where `led` starts it (at its start when nil), (re)opens the stream if its format differs, and
    /// writes the item into the ring, holding at its end when asked to.
    private func play(_ entry: QueueEntry, from led: Restart?, stream: inout StreamProgress) {
        let decoder: any AudioDecoder
        let startFrame: Int
        do {
            decoder = try openDecoder(for: entry, context: decodingContext(for: entry))
            startFrame = firstFrame(of: entry, led: led, decoder: decoder)
            if startFrame > 0 { try decoder.seek(toFrame: min(startFrame, decoder.frameCount)) }
        } catch let error where error.code == .interrupted {
            state.withLock { $0.abandonOpening() }.forEach { $0(false) }
            return
        } catch {
            logger.debug("cannot open \(entry.location): \(error.reason)")
            let seeks = state.withLock { $0.openingFailed(error, atFrame: renderer.producedFrames) }
            renderer.wakeProgressWaiter()
            seeks.forEach { $0(true) }
            return
        }
        guard openStream(for: decoder.format, stream: &stream) else {
            state.withLock { $0.abandonOpening() }.forEach { $0(false) }
            return
        }
        let info = decoder.info(for: entry)
        // Before the item is ready, so that its player can follow its buffer from the start.
        state.withLock { $0.decodingBuffer = decoder.forwardBuffer }
        post(.itemReady(info))
        let resumeFrame = min(startFrame, decoder.frameCount)
        // Told once the item is open at the new frame, before its frames are written: writing can wait for a long
        // time (a paused sink), the seek itself is done.
        let seeks = state.withLock { state in
            state.opened(info, atFrame: renderer.producedFrames - resumeFrame, resumingAt: resumeFrame)
        }
        // Its start is an event to wait for.
        renderer.wakeProgressWaiter()
        seeks.forEach { $0(true) }
        let outcome = writeFrames(of: decoder, stream: &stream)
        state.withLock { $0.decodingBuffer = nil }
        guard case .finished(let failure) = outcome else { return }
        if let failure {
            logger.debug("decoding stopped early: \(failure)")
        }
        let holds = state.withLock { $0.finishedItem(atFrame: renderer.producedFrames, failure: failure) }
        renderer.wakeProgressWaiter()
        if holds {
            markFinalEnd(of: &stream)
            holdAtItemEnd()
        }
    }

    /// Marks the end of what is written as the stream's end, and resumes a sink still waiting for a fill that went
    /// on past an item, so that it hears what was written.
    private func markFinalEnd(of stream: inout StreamProgress) {
        renderer.markEndOfStream()
        stream.endIsMarked = true
        if stream.fillGoesOn {
            stream.fillGoesOn = false
            sink.resumeAfterEndOfStream()
        }
    }

    /// Where `entry`, just opened by `decoder`, starts: a live stream at its live edge, wherever it was; a seek or a
    /// cue where it asks; otherwise where its item's start time says (kept until the item is heard, so that an
    /// opening given up before that does not lose it).
    private func firstFrame(of entry: QueueEntry, led: Restart?, decoder: any AudioDecoder) -> Int {
        let rate = decoder.format.sampleRate
        if decoder.isLive { return 0 }
        if let led, led.startFrame > 0 || led.resumes == entry { return led.startFrame(atRate: rate) }
        let start = state.withLock { $0.player.items[entry.id] }?.startTime ?? .zero
        guard start.isNumeric, start.seconds > 0 else { return 0 }
        return Int((start.seconds * Double(rate)).rounded())
    }

    /// Makes the stream's format `format`: after a change, what was written is drained and the stream closed, then
    /// a new one opened (paused unless playing). False if the engine stopped or the output failed meanwhile.
    private func openStream(for format: AudioFormat, stream: inout StreamProgress) -> Bool {
        guard format != stream.format else { return true }
        if stream.format != nil {
            markFinalEnd(of: &stream)
            guard drainForFormatChange() else { return false }
        }
        do {
            let paused = !state.withLock { $0.isPlaying }
            try sink.start(format: format, renderer: renderer, paused: paused)
            if let refusal = RealTimeScheduling.takeUntoldRefusal() { logger.warning("\(sink.name): \(refusal)") }
            // A play or pause in between went to the old stream (or to none).
            matchOutputToPhase(knownPaused: paused)
        } catch {
            outputFailed(error)
            return false
        }
        stream.format = format
        return true
    }

    /// Waits at an item's end until released, or until a skip, seek or edit (or shutdown) needs the thread.
    private func holdAtItemEnd() {
        endBufferingIfReady(nil)
        while state.withLock({ $0.keepsHolding }) {
            decoderWake.wait()
        }
        state.withLock { $0.leaveHold() }
    }

    /// Drops everything decoded ahead and flushes the output (the restart taken emptied the timeline; `pending`
    /// holds the new order). The renderer then sees an end of stream until the first new frames are written. When
    /// the new audio continues ring frame `continuedFrame`, what is heard past it until the discard takes effect is
    /// not heard again: through what the sink counts as dropped by the flush, or else through the frame estimated
    /// as heard before it. Restart `restartNumber` counts as carried out from the flush on.
    private func dropDecodedAhead(continuing continuedFrame: Int?, restartNumber: Int) {
        let heardAtFlush = continuedFrame != nil && sink.flushDropsUnplayedFrames ? audibleFrame() : nil
        // The end first: a render between the two would otherwise find the ring emptied short of the end, and pad
        // the wait for the new frames with silence (heard as a gap inside the item an edit continues).
        renderer.markEndOfStream(beforeRestart: true)
        renderer.discardWrittenFrames(continuing: continuedFrame, heardThroughFrame: heardAtFlush)
        // Before the flush, so that a sink's flush tells whoever waits for it that the restart took effect.
        state.withLock { $0.carriedOutRestartNumber = max($0.carriedOutRestartNumber, restartNumber) }
        // Renders during the flush take the discard up and hand nothing over, so the count is of what was handed
        // over before; nothing new is written before the exact discard replaces the estimated one.
        let dropped = sink.flushCountingDroppedFrames()
        if let continuedFrame, let heardAtFlush {
            let position = renderer.position.read()
            let heard = dropped.map(position.ringFrameHeard(droppedFrames:))
            if let heard { renderer.discardWrittenFrames(continuing: continuedFrame, heardThroughFrame: heard) }
            lastFlushAccount.withLock {
                $0 = FlushAccount(
                    continuedFrame: continuedFrame, estimatedHeardFrame: heardAtFlush, droppedFrames: dropped,
                    heardFrame: heard, sinkFrames: position.sinkFrames,
                    sinkFramesAtLastRingFrame: position.sinkFramesAtLastRingFrame,
                    ringFramesHanded: position.ringFramesHanded)
            }
        }
        restartCarriedOut.signal()
        // Nothing written before now can be heard any more: for the audible position, it counts as heard, even
        // while paused, before a render has applied the discard.
        heardThroughFrame.max(renderer.producedFrames, ordering: .acquiringAndReleasing)
        frameHeardAtLoss.store(-1, ordering: .releasing)
        renderer.wakeProgressWaiter()
    }

    /// How writing an item into the ring ended.
    private enum WriteOutcome {
        /// The item was decoded to its end, or stopped early with an error.
        case finished(DecoderError?)
        /// A skip or seek arrived; the item is abandoned.
        case interrupted
    }

    /// Decodes the whole item into the ring, waiting for space as the sink plays, and checking for a skip or seek
    /// between chunks.
    ///
    /// After a start or restart (the end is marked, the sink waits), the sink is resumed only once the ring is as
    /// full as it can be made without waiting, or the item has ended, as a sound card starts at a threshold: a
    /// write stops at the ring's end, and a sink that started from that part alone (a PulseAudio stream asks for
    /// its whole target at once) ran dry before the next write and padded silence into the item just sought.
    /// Until then the end mark is held, so that a render in between stops short instead of padding. When the item
    /// ends first and a file follows, the next item's writes go on filling: resumed at the item's end, the sink's
    /// first request was padded with silence heard between the two (150 ms, after an edit in an item's last 0.3 s on
    /// PulseAudio). A remote item may take seconds to open, so before one the sink resumes at the end as before.
    private func writeFrames(of decoder: any AudioDecoder, stream: inout StreamProgress) -> WriteOutcome {
        var appliedGain: AppliedReplayGain?
        var isFillingBeforeResume = false
        while !isShuttingDown {
            let (restarts, isBuffering, gain) = state.withLock { state in
                let player = state.player
                return (
                    state.waitingRestart != nil, state.phase == .buffering,
                    player.replayGainMode.applied(shuffleMode: player.shuffleMode)
                )
            }
            if restarts {
                return .interrupted
            }
            if gain != appliedGain {
                decoder.applyReplayGain(gain)
                appliedGain = gain
            }
            let waitsForData = isBuffering && !endBufferingIfReady(decoder.forwardBuffer)
            if waitsForData, renderer.freeFrames < Self.writeFrames {
                // The output is paused: no render frees space. Woken when the buffer's flags change, or by a
                // restart or shutdown; a pause leaves it waiting, with a full ring and nothing to decode.
                decoderWake.wait()
                continue
            }
            if renderer.freeFrames < Self.writeFrames {
                // Woken by the render that frees the space, or by a restart, a lost output or shutdown.
                renderer.waitForSpace(frames: refillFrames, timeout: Self.untilWoken)
                continue
            }
            var failure: DecoderError?
            let written: Int
            let fills = stream.endIsMarked || isFillingBeforeResume
            do throws(DecoderError) {
                written = try decoder.write(
                    into: renderer, maximumFrames: fills ? .max : Self.writeFrames, holdingEndOfStream: fills)
            } catch {
                failure = error
                written = 0
            }
            if written > 0, stream.endIsMarked {
                stream.endIsMarked = false
                isFillingBeforeResume = true
            }
            if isFillingBeforeResume {
                if written == 0, failure == nil, nextIsFile() {
                    isFillingBeforeResume = false
                    stream.endIsMarked = true
                    stream.fillGoesOn = true
                } else if written == 0 || failure != nil || renderer.freeFrames < Self.writeFrames {
                    isFillingBeforeResume = false
                    _ = renderer.takeAwaitedContinuation()
                    renderer.continueStream()
                    stream.fillGoesOn = false
                    sink.resumeAfterEndOfStream()
                }
            } else if written > 0, renderer.takeAwaitedContinuation() {
                sink.resumeAfterEndOfStream()
            }
            let marks = decoder.takeStreamMarks()
            if !marks.isEmpty {
                state.withLock { $0.timeline.noteMarks(marks) }
                renderer.wakeProgressWaiter()
            }
            if failure?.code == .interrupted {
                return .interrupted
            }
            if failure != nil || written == 0 {
                return .finished(failure)
            }
        }
        return .interrupted
    }

    /// True when the next entry to decode is a local file.
    private func nextIsFile() -> Bool {
        state.withLock { $0.pending.first }.map { !URL.isRemoteItemLocation($0.location) } ?? false
    }

    /// Waits until everything written so far has been heard and closes the stream. False if the engine stopped, the
    /// output failed, or a skip, seek or edit arrived meanwhile (it is carried out at once, not after the drain).
    /// The stream closes at once when there is nothing left to hear: after a flush with nothing written since, or
    /// while buffering (it began once everything written was heard). A sink paused meanwhile would never finish a
    /// drain.
    private func drainForFormatChange() -> Bool {
        let end = renderer.producedFrames
        let isAllHeard =
            heardThroughFrame.load(ordering: .acquiring) >= end || state.withLock { $0.phase == .buffering }
        if !isAllHeard {
            while renderer.position.read().ringFrames < end {
                let mustStop = state.withLock { $0.phase.isFinal || $0.phase.isOutputLost || $0.waitingRestart != nil }
                guard !mustStop else { return false }
                renderer.waitForSpace(frames: .max, timeout: .now() + .milliseconds(100))
            }
            guard drainOutput() else { return false }
        }
        sink.stop()
        return true
    }
}

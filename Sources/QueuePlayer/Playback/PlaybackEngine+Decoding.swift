import Dispatch
import FoundationEssentials

extension PlaybackEngine {
    /// The decoding thread writes when at least this many frames are free, so each write is worth its wake-up.
    static let decodeChunkFrames = 4096

    /// What the decoding thread does next.
    private enum NextStep {
        case decode(QueueEntry)
        case restart
        case idle
        /// The output is lost: wait until it is back (the event thread reconnects it).
        case waitForOutput
    }

    /// The decoding thread: opens each queued item in turn and writes its frames into the ring, opening or
    /// reopening the sink when the format changes, and carries out skips and seeks. Blocks on file I/O and on a
    /// full ring; never on the sink's render thread.
    func runDecoding() {
        var streamFormat: AudioFormat?
        var endIsMarked = true
        var restart: Restart?
        while !isShuttingDown {
            let entry: QueueEntry
            switch nextStep() {
            case .restart:
                // A restart taken but not yet carried out is replaced: its seeks did not finish.
                restart?.completions.forEach { $0(false) }
                restart = applyRestart()
                endIsMarked = true
                if state.withLock({ $0.takeOutputReopening() }) {
                    // The output was reconnected: the old stream is gone.
                    streamFormat = nil
                }
                continue
            case .waitForOutput:
                decoderWake.wait()
                continue
            case .idle:
                renderer.markEndOfStream()
                endIsMarked = true
                state.withLock { $0.decoderIsIdle = true }
                renderer.wakeProgressWaiter()
                decoderWake.wait()
                continue
            case .decode(let next):
                entry = next
            }
            let startFrame = restart?.startFrame ?? 0
            let resumes = restart?.resumes == entry
            // Told once the item is open at the new frame (or failed to open), before its frames are written:
            // writing can wait for a long time (a paused sink), the seek itself is done.
            let completions = restart?.completions ?? []
            restart = nil
            let decoder: any AudioDecoder
            do {
                decoder = try makeDecoder(entry.url, logger)
                if startFrame > 0 { try decoder.seek(toFrame: min(startFrame, decoder.frameCount)) }
            } catch {
                logger.debug("cannot open \(entry.url.path): \(error.reason)")
                state.withLock { state in
                    state.timeline.recordFailure(entry, error, atFrame: renderer.producedFrames)
                    state.opening = nil
                }
                renderer.wakeProgressWaiter()
                completions.forEach { $0(true) }
                continue
            }
            if decoder.format != streamFormat {
                if streamFormat != nil {
                    renderer.markEndOfStream()
                    endIsMarked = true
                    guard drainForFormatChange() else {
                        abandonOpening(completions)
                        continue
                    }
                }
                do {
                    try sink.start(format: decoder.format, renderer: renderer)
                    if !state.withLock({ $0.isPlaying }) { sink.setPaused(true) }
                } catch {
                    outputFailed(error)
                    abandonOpening(completions)
                    continue
                }
                streamFormat = decoder.format
            }
            let info = decoder.info(for: entry)
            post(.itemReady(info))
            let resumeFrame = min(startFrame, decoder.frameCount)
            state.withLock { state in
                state.timeline.begin(
                    info, atFrame: renderer.producedFrames - resumeFrame, resumingAt: resumeFrame,
                    announcesStart: !resumes)
                state.opening = nil
            }
            completions.forEach { $0(true) }
            switch writeFrames(of: decoder, endIsMarked: &endIsMarked) {
            case .interrupted:
                continue
            case .finished(let failure):
                if let failure {
                    logger.debug("decoding stopped early: \(failure)")
                }
                state.withLock { $0.timeline.endCurrent(atFrame: renderer.producedFrames, failure: failure) }
                renderer.wakeProgressWaiter()
                if state.withLock({ $0.holdsAtItemEnd && !$0.pending.isEmpty }) {
                    renderer.markEndOfStream()
                    endIsMarked = true
                    holdAtItemEnd()
                }
            }
        }
    }

    /// Gives up the entry being opened because the output failed (or the engine stopped): the restart the failure
    /// set up holds it in its order, so it is opened again once the output is back.
    private func abandonOpening(_ completions: [@Sendable (Bool) -> Void]) {
        state.withLock { $0.opening = nil }
        completions.forEach { $0(false) }
    }

    /// Waits at an item's end until released, or until a skip, seek or edit (or shutdown) needs the thread.
    private func holdAtItemEnd() {
        state.withLock { state in
            state.isHoldingAtItemEnd = true
            state.holdReleased = false
        }
        while state.withLock({ $0.holdsAtItemEnd && !$0.holdReleased && $0.restart == nil }), !isShuttingDown {
            decoderWake.wait()
        }
        state.withLock { $0.isHoldingAtItemEnd = false }
    }

    /// Takes the next pending entry, unless a restart is waiting (which must see the pending list whole).
    private func nextStep() -> NextStep {
        state.withLock { state in
            if state.phase.isOutputLost { return .waitForOutput }
            if state.restart != nil { return .restart }
            guard !state.pending.isEmpty else { return .idle }
            state.decoderIsIdle = false
            state.opening = state.pending.removeFirst()
            return state.opening.map(NextStep.decode) ?? .idle
        }
    }

    /// Drops everything decoded ahead, flushes the output and forgets the timeline; `pending` already holds the new
    /// order. The renderer then sees an end of stream until the first new frames are written.
    private func applyRestart() -> Restart? {
        let restart = state.withLock { state in
            defer { state.restart = nil }
            return state.restart
        }
        renderer.discardWrittenFrames()
        renderer.markEndOfStream()
        sink.flush()
        // Nothing written before now can be heard any more: for the audible position, it counts as heard, even
        // while paused, before a render has applied the discard.
        heardThroughFrame.max(renderer.producedFrames, ordering: .acquiringAndReleasing)
        frameHeardAtLoss.store(-1, ordering: .releasing)
        state.withLock { state in
            state.timeline.removeAll()
            if restart?.keepsObservers != true { state.resetObserverProgress() }
        }
        renderer.wakeProgressWaiter()
        return restart
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
    private func writeFrames(of decoder: any AudioDecoder, endIsMarked: inout Bool) -> WriteOutcome {
        while !isShuttingDown {
            if state.withLock({ $0.restart != nil }) {
                return .interrupted
            }
            if renderer.freeFrames < Self.decodeChunkFrames {
                renderer.waitForSpace(frames: Self.decodeChunkFrames, timeout: .now() + .milliseconds(200))
                continue
            }
            var failure: DecoderError?
            let written = renderer.write { span in
                do throws(DecoderError) {
                    return try decoder.decode(into: &span)
                } catch {
                    failure = error
                    return 0
                }
            }
            if written > 0, endIsMarked {
                endIsMarked = false
                sink.resumeAfterEndOfStream()
            }
            if failure != nil || written == 0 {
                return .finished(failure)
            }
        }
        return .interrupted
    }

    /// Waits until everything written so far has been heard and closes the stream. False if the engine stopped or
    /// the output failed.
    private func drainForFormatChange() -> Bool {
        let end = renderer.producedFrames
        while renderer.position.read().ringFrames < end {
            guard !isShuttingDown, !state.withLock({ $0.phase.isOutputLost }) else { return false }
            renderer.waitForSpace(frames: .max, timeout: .now() + .milliseconds(100))
        }
        guard drainOutput() else { return false }
        sink.stop()
        return true
    }
}

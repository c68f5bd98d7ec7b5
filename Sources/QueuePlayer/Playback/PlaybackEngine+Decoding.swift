import Dispatch
import FoundationEssentials

extension PlaybackEngine {
    /// The decoding thread writes when at least this many frames are free, so each write is worth its wake-up.
    static let decodeChunkFrames = 4096

    /// The decoding thread: opens each queued item in turn and writes its frames into the ring, opening or
    /// reopening the sink when the format changes. Blocks on file I/O and on a full ring; never on the sink's
    /// render thread.
    func runDecoding() {
        var streamFormat: AudioFormat?
        var endIsMarked = true
        while !isShuttingDown {
            guard let entry = takeNextEntry() else {
                renderer.markEndOfStream()
                endIsMarked = true
                state.withLock { $0.decoderIsIdle = true }
                renderer.wakeProgressWaiter()
                decoderWake.wait()
                continue
            }
            let decoder: any AudioDecoder
            do {
                decoder = try makeDecoder(entry.url, logger)
            } catch {
                logger.debug("cannot open \(entry.url.path): \(error.reason)")
                state.withLock { $0.timeline.recordFailure(entry, error, atFrame: renderer.producedFrames) }
                renderer.wakeProgressWaiter()
                continue
            }
            if decoder.format != streamFormat {
                if streamFormat != nil {
                    renderer.markEndOfStream()
                    endIsMarked = true
                    guard drainForFormatChange() else { return }
                }
                do {
                    try sink.start(format: decoder.format, renderer: renderer)
                    if !state.withLock({ $0.isPlaying }) { sink.setPaused(true) }
                } catch {
                    outputFailed(error)
                    return
                }
                streamFormat = decoder.format
            }
            let info = ItemInfo(
                entry: entry, format: decoder.format, frameCount: decoder.frameCount, metadata: decoder.metadata)
            state.withLock { $0.timeline.begin(info, atFrame: renderer.producedFrames) }
            let failure = writeFrames(of: decoder, endIsMarked: &endIsMarked)
            if let failure {
                logger.debug("decoding stopped early: \(failure)")
            }
            state.withLock { $0.timeline.endCurrent(atFrame: renderer.producedFrames, failure: failure) }
            renderer.wakeProgressWaiter()
        }
    }

    /// Moves the next pending entry out of the queue, or returns nil when there is none.
    private func takeNextEntry() -> QueueEntry? {
        state.withLock { state in
            guard !state.pending.isEmpty else { return nil }
            state.decoderIsIdle = false
            return state.pending.removeFirst()
        }
    }

    /// Decodes the whole item into the ring, waiting for space as the sink plays. Returns the decoder's error if it
    /// stopped early.
    private func writeFrames(of decoder: any AudioDecoder, endIsMarked: inout Bool) -> DecoderError? {
        while !isShuttingDown {
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
                return failure
            }
        }
        return nil
    }

    /// Waits until everything written so far has been heard and closes the stream. False if the engine stopped.
    private func drainForFormatChange() -> Bool {
        let end = renderer.producedFrames
        while renderer.position.read().ringFrames < end {
            guard !isShuttingDown else { return false }
            renderer.waitForSpace(frames: .max, timeout: .now() + .milliseconds(100))
        }
        guard drainOutput() else { return false }
        sink.stop()
        return true
    }
}

import Dispatch
import Synchronization

/// The single render path shared by every sink: it copies decoded frames from the player's ring into the sink's
/// buffer, converts them to the sink's sample type (``PCMSample``), and publishes how far rendering has come. The
/// player makes one and hands it to ``AudioSink/start(format:renderer:paused:)``.
///
/// Threads:
/// - ``render(into:underrun:)`` is called by one sink thread at a time (the PulseAudio write callback, the
///   ``NullSink`` thread, a sink of your own). It only copies, converts, writes silence and touches atomics; it
///   never allocates, locks, logs or blocks. Its wake-ups are `DispatchSemaphore.signal()` calls, which do not
///   block and are made only when a waiter asked for one.
/// - The player's decoding thread is the only producer.
/// - Any thread may read ``renderedFrameCount`` and ``hasRenderedEverything``.
public final class Renderer: Sendable {
    /// Samples a frame: every decoder delivers stereo.
    public static let channelCount = 2

    /// What to do when the ring runs dry before the end of the stream.
    public enum UnderrunPolicy: Sendable {
        /// Fill the rest with silence, as a sound card needs (the silence is counted as an underrun).
        case padWithSilence
        /// Stop short; the caller waits with ``waitForFrames(minimumFrames:timeout:)`` (sinks that are not paced by
        /// hardware).
        case stopShort
    }

    /// What one ``render(into:underrun:)`` call did.
    public struct Result: Equatable, Sendable {
        /// Frames written to the destination, silence included; the sink should play exactly these.
        public var frameCount: Int
        /// Of those, the frames that came from the queue (the rest is silence after an underrun).
        public var queuedFrameCount: Int
        /// True when the queue has nothing more for now: the producer marked the end and the ring is empty, or the
        /// new audio of a discard that continues the old has not yet reached what was heard of it. The destination
        /// was not padded, so a sink can stop asking until `AudioSink/resumeAfterEndOfStream()`.
        public var reachedEndOfStream: Bool
        /// True when the end reached is one to be heard out: the queue ran out, an item ended where the player holds,
        /// or the stream is drained for a change of format. False at any other end: the start of a stream, a skip,
        /// seek or edit that flushes the sink and writes the new audio next, or a continuation still awaited. A sink
        /// whose server sits on a partly filled buffer (PipeWire's quantum) completes it with silence only at a final
        /// end; anywhere else that silence would be heard before the audio that follows. An end the producer has
        /// written past (it fills the ring before the sink resumes) is no longer final.
        public var endOfStreamIsFinal = false
    }

    let ring: SampleRing
    let position = RenderPosition()
    /// A discard asked for, published as a sequence lock (odd while the producer writes the fields below).
    private let discardSequence = Atomic<Int>(0)
    /// The ring index (in samples) of the discard: everything written before it is dropped.
    private let discardRequest = Atomic<Int>(0)
    /// For a discard whose new audio continues what was heard: the ring index (samples) that its first frame
    /// continues, else -1.
    private let discardContinues = Atomic<Int>(-1)
    /// For such a discard on a sink that drops unplayed frames when flushed: the ring index (samples) heard through
    /// at the flush, else -1 (every frame rendered was heard).
    private let discardHeardThrough = Atomic<Int>(-1)
    /// The sequence of the last discard the render thread took up, and where it skips to. Render thread only.
    private let discardTaken = Atomic<Int>(0)
    private let skipTarget = Atomic<Int>(0)
    /// Nothing is written yet, so the stream starts out ended: sinks wait for `AudioSink/resumeAfterEndOfStream()`.
    private let endOfStreamIndex = Atomic<Int>(0)
    /// Whether the end marked last is final (see ``Result/endOfStreamIsFinal``). Stored before the index it goes
    /// with, and cleared before frames are written past it, so a render that sees either sees the flag too.
    private let markedEndIsFinal = Atomic<Bool>(false)
    private let underrunFrames = Atomic<Int>(0)
    /// The ring index (in samples) that the reads of the last render, or the one under way, cannot pass: where it
    /// started reading (after a skip) plus what it was asked for (see ``truncate(atRingFrame:)``). Render thread
    /// stores.
    private let renderReach = Atomic<Int>(0)
    private let gainBits = Atomic<UInt32>(Float(1).bitPattern)
    private let multipliesByGain = Atomic<Bool>(true)
    /// Free samples the waiting producer needs before it is worth waking; 0 when it is not waiting.
    private let producerWantsFreeSamples = Atomic<Int>(0)
    private let spaceAvailable = DispatchSemaphore(value: 0)
    private let wakeAtRingFrame = Atomic<Int>(Int.max)
    private let progressed = DispatchSemaphore(value: 0)
    /// Samples the waiting consumer needs before it is worth waking; 0 when it is not waiting.
    private let consumerWantsSamples = Atomic<Int>(0)
    private let framesAvailable = DispatchSemaphore(value: 0)
    /// Set by ``interruptFrameWait()`` for a consumer that is not waiting yet: its next wait returns at once.
    private let frameWaitInterrupted = Atomic<Bool>(false)
    /// Set by a render that stopped inside a continuation's skip (see ``takeAwaitedContinuation()``).
    private let continuationAwaited = Atomic<Bool>(false)

    /// The ring's size unless asked otherwise: 32,768 frames, about 0.75 s at 44.1 kHz (256 KiB of Float32).
    public static let defaultBufferFrames = 32_768

    /// Creates a renderer whose ring holds `bufferFrames` frames (rounded up to a power of two).
    package init(bufferFrames: Int = defaultBufferFrames) {
        ring = SampleRing(minimumCapacity: bufferFrames * Self.channelCount)
    }

    /// The factor every sample is multiplied by as it is rendered (volume, or 0 when muted); 1 changes no bit.
    /// Any thread; applies from the next render, so through a sink's buffer it is heard that much later.
    package var gain: Float {
        get { Float(bitPattern: gainBits.load(ordering: .relaxed)) }
        set { gainBits.store(max(0, newValue).bitPattern, ordering: .relaxed) }
    }

    /// Whether rendering multiplies the samples by the player's gain (its volume, or 0 while muted): true, the
    /// default. A sink whose server applies the gain to the stream itself (see ``AudioSink/setGain(_:)``) turns it
    /// off, so that it is not applied twice; the samples then go out as decoded. Any thread; applies from the next
    /// render.
    public var appliesGain: Bool {
        get { multipliesByGain.load(ordering: .relaxed) }
        set { multipliesByGain.store(newValue, ordering: .relaxed) }
    }

    /// Frames handed to the sink so far by ``render(into:underrun:)``, silence included: with what the sink has not
    /// played yet, its ``AudioSink/latencyFrames()``. Any thread.
    public var renderedFrameCount: Int { position.read().sinkFrames }

    /// Frames of silence written so far because the ring ran dry before the end of the stream (glitches).
    public var underrunFrameCount: Int { underrunFrames.load(ordering: .relaxed) }

    // MARK: Render thread

    /// Fills `destination` (interleaved stereo) from the ring and returns what was written. On an underrun it
    /// follows `underrun`; at the end of the stream it always stops short. Audio callback safe (see the type).
    public func render<Sample: PCMSample>(
        into destination: inout MutableSpan<Sample>, underrun: UnderrunPolicy = .padWithSilence
    ) -> Result {
        let channels = Self.channelCount
        let frames = destination.count / channels
        takeUpDiscard()
        let target = skipTarget.load(ordering: .relaxed)
        // Before this render reads, with the fence that pairs with the one in `SampleRing.truncate`.
        renderReach.store(max(ring.consumedCount, target) + destination.count, ordering: .sequentiallyConsistent)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if target > ring.consumedCount {
            ring.skip(to: target)
        }
        let gain = multipliesByGain.load(ordering: .relaxed) ? Float(bitPattern: gainBits.load(ordering: .relaxed)) : 1
        var copiedSamples = ring.read(into: &destination, from: 0, gain: gain)
        let awaitsContinuation =
            copiedSamples < destination.count && ring.consumedCount < target
            && !readContinuation(into: &destination, copiedSamples: &copiedSamples, skippingTo: target, gain: gain)
        let copied = copiedSamples / channels
        let consumed = ring.consumedCount
        let ended =
            awaitsContinuation || copied < frames && consumed >= endOfStreamIndex.load(ordering: .acquiring)
        let written = ended || underrun == .stopShort ? copied : frames
        for index in copiedSamples..<(written * channels) {
            destination[index] = .silence
        }
        if written > copied {
            underrunFrames.add(written - copied, ordering: .relaxed)
        }
        var reading = position.read()
        reading.sinkFrames += written
        reading.ringFrames = consumed / channels
        if copied > 0 {
            reading.sinkFramesAtLastRingFrame = reading.sinkFrames - (written - copied)
            reading.ringFramesHanded = reading.ringFrames
        }
        position.publish(reading)
        signalWaiters(ringFrame: reading.ringFrames)
        let isFinal = ended && !awaitsContinuation && markedEndIsFinal.load(ordering: .relaxed)
        return Result(
            frameCount: written, queuedFrameCount: copied, reachedEndOfStream: ended, endOfStreamIsFinal: isFinal)
    }

    /// Reads on while the ring has run dry inside the skip of a continuation (the producer has not yet written
    /// as far as what was heard). That is no underrun: the stream is not due yet, so nothing is padded. Returns
    /// true when the destination is full or the skip is done (what follows is the ordinary stream), false when the
    /// render must stop as at an end of the stream; ``takeAwaitedContinuation()`` then tells the producer's next
    /// write to resume the sink. The flag is published before the ring is looked at again, and the producer
    /// publishes its frames before it looks at the flag, each with a sequentially consistent fence between (as in
    /// ``signalWaiters(ringFrame:)``): either this render sees the new frames, or the producer sees the flag.
    private func readContinuation<Sample: PCMSample>(
        into destination: inout MutableSpan<Sample>, copiedSamples: inout Int, skippingTo target: Int, gain: Float
    ) -> Bool {
        while copiedSamples < destination.count, ring.consumedCount < target {
            guard endOfStreamIndex.load(ordering: .acquiring) == .max else { return false }
            continuationAwaited.store(true, ordering: .sequentiallyConsistent)
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            let before = ring.consumedCount
            ring.skip(to: target)
            copiedSamples += ring.read(into: &destination, from: copiedSamples, gain: gain)
            if ring.consumedCount == before { return false }
            continuationAwaited.store(false, ordering: .relaxed)
        }
        return true
    }

    /// Takes up a new discard: skip to where it asked, and past as much of a continuation as was heard of the old
    /// audio since the continued frame (the renderer may have gone on playing it until now), so nothing is heard
    /// twice. Frames to skip that are not written yet are skipped as they arrive.
    private func takeUpDiscard() {
        let sequence = discardSequence.load(ordering: .acquiring)
        // Odd: the producer is publishing one; the next render takes it up.
        guard sequence & 1 == 0, sequence != discardTaken.load(ordering: .relaxed) else { return }
        var target = discardRequest.load(ordering: .relaxed)
        let continues = discardContinues.load(ordering: .relaxed)
        let flushedAt = discardHeardThrough.load(ordering: .relaxed)
        atomicMemoryFence(ordering: .acquiring)
        guard discardSequence.load(ordering: .relaxed) == sequence else { return }
        if continues >= 0 {
            let heard = flushedAt >= 0 ? flushedAt : ring.consumedCount
            target += max(0, heard - continues)
        }
        skipTarget.store(target, ordering: .relaxed)
        // After the target: the producer's truncate looks at the target once it sees the discard taken up.
        discardTaken.store(sequence, ordering: .releasing)
    }

    /// Wakes a thread waiting for space or progress that this render gave it. Each wait and this follow one pattern:
    /// a waiter stores its wish and then looks at the ring; the renderer stores the ring's indexes and then looks
    /// at the wish. Each side puts a sequentially consistent fence between its store and its load, so at least one
    /// of them sees the other's store (with acquire/release alone both could miss, and the waiter would sleep its
    /// whole timeout). The same holds between `write(_:)` and ``waitForFrames(minimumFrames:timeout:)``. A fence
    /// neither allocates nor locks.
    private func signalWaiters(ringFrame: Int) {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        let wanted = producerWantsFreeSamples.load(ordering: .acquiring)
        if wanted > 0, ring.freeCount >= wanted,
            producerWantsFreeSamples.compareExchange(expected: wanted, desired: 0, ordering: .acquiringAndReleasing)
                .exchanged
        {
            spaceAvailable.signal()
        }
        let wakeAt = wakeAtRingFrame.load(ordering: .acquiring)
        if ringFrame >= wakeAt,
            wakeAtRingFrame.compareExchange(expected: wakeAt, desired: .max, ordering: .acquiringAndReleasing).exchanged
        {
            progressed.signal()
        }
    }

    /// Frames the ring holds when full; fixed at init. Any thread.
    public var capacityFrames: Int { ring.capacity / Self.channelCount }

    /// Blocks a sink that is not paced by hardware until at least `minimumFrames` frames are readable (at most half
    /// the ring is waited for), the end of the stream is marked, or `timeout` passes. A sink that drains the ring
    /// faster than it is filled (an unpaced one) waits for a batch, and is then woken once a batch, not at every
    /// write. ``interruptFrameWait()`` ends it early. Not for audio callbacks: it blocks.
    public func waitForFrames(minimumFrames: Int = 1, timeout: DispatchTime) {
        let wanted = min(max(1, minimumFrames), capacityFrames / 2) * Self.channelCount
        consumerWantsSamples.store(wanted, ordering: .sequentiallyConsistent)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if consumerHasEnough(wanted) || frameWaitInterrupted.exchange(false, ordering: .sequentiallyConsistent) {
            consumerWantsSamples.store(0, ordering: .releasing)
            return
        }
        _ = framesAvailable.wait(timeout: timeout)
        consumerWantsSamples.store(0, ordering: .releasing)
        // The caller looks at its stream again now: an interrupt that woke it, or came since, is taken up.
        frameWaitInterrupted.store(false, ordering: .releasing)
    }

    /// Ends the consumer's ``waitForFrames(minimumFrames:timeout:)`` now, or its next one at once if it is not
    /// waiting yet: its stream changed (stopped, paused or started again), which no write tells it. Any thread.
    public func interruptFrameWait() {
        frameWaitInterrupted.store(true, ordering: .sequentiallyConsistent)
        let wanted = consumerWantsSamples.load(ordering: .sequentiallyConsistent)
        if wanted > 0,
            consumerWantsSamples.compareExchange(expected: wanted, desired: 0, ordering: .acquiringAndReleasing)
                .exchanged
        {
            framesAvailable.signal()
        }
    }

    /// True when `wanted` samples are readable, or the end of the stream is marked (what is readable is all there
    /// is until the producer writes again).
    private func consumerHasEnough(_ wanted: Int) -> Bool {
        ring.readableCount >= wanted || endOfStreamIndex.load(ordering: .acquiring) != .max
    }

    // MARK: Producer (decoding thread)

    /// Frames the producer has written since the renderer was made: the ring index of the next frame written.
    var producedFrames: Int { ring.producedCount / Self.channelCount }

    /// Copies decoded frames in through `body`, which fills the span it is given (at most `maximumFrames`) and
    /// returns frames written. Producer thread only. Clears an end-of-stream mark after publishing the frames: a
    /// render in between sees an end, not an underrun, so it stops short (and waits for
    /// `AudioSink/resumeAfterEndOfStream()`) instead of padding silence into the stream. With `holdingEndOfStream`
    /// the mark stays until ``continueStream()``: renders take what was written and stop short, as at an end that is
    /// not final.
    func write(
        maximumFrames: Int = .max, holdingEndOfStream: Bool = false, _ body: (inout MutableSpan<Float>) -> Int
    ) -> Int {
        if holdingEndOfStream {
            // What is written past a mark continues the stream: that end is no longer one to be heard out.
            markedEndIsFinal.store(false, ordering: .relaxed)
        }
        let maximum = maximumFrames.multipliedReportingOverflow(by: Self.channelCount)
        let written =
            ring.write(maximum: maximum.overflow ? .max : maximum.partialValue) { span in
                body(&span) * Self.channelCount
            } / Self.channelCount
        if written > 0, !holdingEndOfStream {
            endOfStreamIndex.store(.max, ordering: .releasing)
        }
        wakeConsumer()
        return written
    }

    /// Clears the end-of-stream mark held by writes since it was set: what was written continues the stream, and
    /// a render that runs dry from now on pads with silence (an underrun). Producer thread only.
    func continueStream() {
        endOfStreamIndex.store(.max, ordering: .releasing)
        wakeConsumer()
    }

    private func wakeConsumer() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        let wanted = consumerWantsSamples.load(ordering: .acquiring)
        if wanted > 0, consumerHasEnough(wanted),
            consumerWantsSamples.compareExchange(expected: wanted, desired: 0, ordering: .acquiringAndReleasing)
                .exchanged
        {
            framesAvailable.signal()
        }
    }

    /// True, once, when a render stopped to wait for the rest of a continuation (a discard's new audio had not yet
    /// reached what was heard of the old; see ``discardWrittenFrames(continuing:heardThroughFrame:)``): the caller,
    /// having just written, resumes the sink as after an end of the stream. Producer thread only, after a write.
    func takeAwaitedContinuation() -> Bool {
        continuationAwaited.exchange(false, ordering: .sequentiallyConsistent)
    }

    /// Free frames in the ring now.
    var freeFrames: Int { ring.freeCount / Self.channelCount }

    /// Blocks the producer until at least `frames` frames are free (`.max`: the ring is empty), or `timeout`
    /// passes. The renderer wakes it only then, not at every render. Producer thread only; callers loop on their
    /// own condition.
    func waitForSpace(frames: Int, timeout: DispatchTime) {
        let wanted = min(frames, ring.capacity / Self.channelCount) * Self.channelCount
        producerWantsFreeSamples.store(wanted, ordering: .releasing)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if ring.freeCount >= wanted {
            producerWantsFreeSamples.store(0, ordering: .releasing)
            return
        }
        _ = spaceAvailable.wait(timeout: timeout)
        producerWantsFreeSamples.store(0, ordering: .releasing)
    }

    /// Ends a ``waitForSpace(frames:timeout:)`` early (a skip or seek needs the producer). Any thread.
    func wakeProducer() {
        spaceAvailable.signal()
    }

    /// Says that nothing follows what was written so far (the queue is exhausted, an item ended where the player
    /// holds, or a format change needs the stream drained), or, `beforeRestart`, nothing until a skip, seek or edit
    /// has flushed the sink and written the new audio. The renderer then stops short instead of padding with
    /// silence. Producer thread only.
    func markEndOfStream(beforeRestart: Bool = false) {
        markedEndIsFinal.store(!beforeRestart, ordering: .relaxed)
        endOfStreamIndex.store(ring.producedCount, ordering: .releasing)
        wakeConsumer()
    }

    /// True when everything written has been rendered and the end is marked: a sink's ``AudioSink/drain()`` waits
    /// for this, then for its own buffer to play out. Any thread.
    public var hasRenderedEverything: Bool {
        ring.consumedCount >= endOfStreamIndex.load(ordering: .acquiring)
    }

    // MARK: Any thread

    /// Makes the renderer drop everything written before now (a skip or a seek). Takes effect at the next render.
    /// Producer thread only, so that nothing is written between reading the write index and publishing it.
    ///
    /// When what is written next continues the old audio from ring frame `continuedFrame` (an edit of what was
    /// decoded ahead resumes the item being heard), the renderer also skips as many new frames as it went on
    /// playing of the old audio past that frame: through `heardThroughFrame`, the frame heard when a sink that drops
    /// unplayed frames was flushed, or else through every frame it rendered before taking the discard up.
    func discardWrittenFrames(continuing continuedFrame: Int? = nil, heardThroughFrame: Int? = nil) {
        let channels = Self.channelCount
        let start = discardSequence.load(ordering: .relaxed)
        discardSequence.store(start + 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        discardRequest.store(ring.producedCount, ordering: .relaxed)
        discardContinues.store(continuedFrame.map { $0 * channels } ?? -1, ordering: .relaxed)
        discardHeardThrough.store(heardThroughFrame.map { $0 * channels } ?? -1, ordering: .relaxed)
        discardSequence.store(start + 2, ordering: .releasing)
    }

    /// Takes back everything written from ring frame `frame` on, so that what is written next follows it (an edit of
    /// what follows the item that ends there), unless the sink may already have been handed any of it: rendered
    /// already, or within the reach of the last render (the one under way, if any), from where it started as far as
    /// it was asked for. Refused, too, while a discard is not taken up or its skip goes past `frame`. True when
    /// done, or when nothing was written past `frame`. Producer thread only.
    func truncate(atRingFrame frame: Int) -> Bool {
        let channels = Self.channelCount
        let sequence = discardSequence.load(ordering: .relaxed)
        guard discardTaken.load(ordering: .acquiring) == sequence,
            skipTarget.load(ordering: .relaxed) <= frame * channels
        else { return false }
        return ring.truncate(at: frame * channels) { renderReach.load(ordering: .sequentiallyConsistent) }
    }

    /// Ends a ``waitUntilRendered(ringFrame:timeout:)`` early (the timeline changed, or the engine is stopping).
    func wakeProgressWaiter() {
        progressed.signal()
    }

    /// Blocks until the renderer has consumed ring frame `frame`, or until `timeout`. One waiting thread at a time.
    func waitUntilRendered(ringFrame frame: Int, timeout: DispatchTime) {
        wakeAtRingFrame.store(frame, ordering: .releasing)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if position.read().ringFrames >= frame {
            wakeAtRingFrame.store(.max, ordering: .releasing)
            return
        }
        _ = progressed.wait(timeout: timeout)
    }
}

/// Where a ``QueuePlayer``'s decoded audio goes: ``PulseAudioSink`` (PulseAudio, or PipeWire's pulse server),
/// ``SnapcastSink`` (rooms), ``NullSink`` (no sound server), or a sink of your own. Choose one at run time and give
/// it to the player's initializer as `any AudioSink` (<doc:ChoosingASink>).
///
/// The player owns its sink and calls it from its own threads. A sink pulls audio: ``start(format:renderer:paused:)``
/// hands it a ``Renderer``, and from then on the sink's own thread (or its sound server's callback) calls
/// ``Renderer/render(into:underrun:)`` whenever it wants frames, converting to `Float` or `Int16` as it asks.
///
/// Contract:
/// - When a render reports ``Renderer/Result/reachedEndOfStream``, stop asking until ``resumeAfterEndOfStream()``:
///   the queue has nothing more for now, and nothing was padded.
/// - To change format the player calls ``drain()``, ``stop()``, then ``start(format:renderer:paused:)`` again.
/// - ``latencyFrames()`` counts frames rendered but not yet heard: the player subtracts it to report the time heard,
///   so it is what makes time observers exact.
/// - A failure after start (the server went away) is told once through the failure handler, on a thread of the
///   sink's; the player then calls ``reconnect()`` with growing waits until it returns, and starts a new stream.
///
/// Real-time rules for the thread that renders (a sound card's deadline does not wait): between asking for frames
/// and handing them on, do not allocate, take a lock, log, or make a system call that can block. Render into a buffer
/// made before the stream starts. Wake other threads with `DispatchSemaphore.signal()` or atomics, never by waiting
/// for them. An unpaced sink (one that no clock drives) renders with ``Renderer/UnderrunPolicy/stopShort`` and waits
/// with ``Renderer/waitForFrames(minimumFrames:timeout:)``; ``stop()`` ends that wait with
/// ``Renderer/interruptFrameWait()``.
///
/// Threading: the player calls the requirements from its threads (its decoding thread, and the caller of a command
/// such as ``QueuePlayer/pause()``), sometimes two at once, never from the sink's render thread: a sink guards its
/// own state. A handler the sink calls must not call back into the sink synchronously.
public protocol AudioSink: AnyObject, Sendable {
    /// A name for logs, such as `PulseAudio (unix:/run/pulse/native)` or `null sink (unpaced)`.
    var name: String { get }
    /// The one sample rate the sink plays every item at (a sound server's), or nil when it opens its stream at each
    /// item's own rate. The engine resamples items at other rates. May change when the sink reconnects; read it as
    /// each item is opened.
    var outputSampleRate: Int? { get }
    /// How many frames the engine decodes ahead of this sink (the size of its ring, rounded up to a power of two).
    /// Read once, as the engine is made; any thread. A constant of the sink's.
    var decodeAheadFrames: Int { get }
    /// Opens output in `format` and starts pulling frames from `renderer`; with `paused`, it starts paused (corked)
    /// and plays nothing until ``setPaused(_:)`` resumes it.
    func start(format: AudioFormat, renderer: Renderer, paused: Bool) throws(AudioSinkError)
    /// Pauses (PulseAudio: corks) or resumes output. Frames already handed over are kept.
    func setPaused(_ paused: Bool)
    /// Throws away frames handed over but not yet played.
    func flush()
    /// As ``flush()``, and returns how many frames it threw away: the last ones handed over before the call, never
    /// heard. The player continues an item from exactly there after an edit of what follows it. Nil when the sink
    /// cannot tell; the player then estimates with ``latencyFrames()`` before flushing. A sink that hands over
    /// nothing it could drop (see ``flushDropsUnplayedFrames``) needs no implementation of its own. Called as
    /// ``flush()`` is, from the player's decoding thread, never the render thread; it may block until the sink's
    /// server answers.
    func flushCountingDroppedFrames() -> Int?
    /// True when ``flush()`` throws frames away (a server's buffer); false when every frame rendered is heard.
    var flushDropsUnplayedFrames: Bool { get }
    /// True when frames handed over are still heard after a pause (they sit in a remote buffer, as Snapcast's), so
    /// that ``latencyFrames()`` plays out while paused; false when a pause silences them at once (a corked stream).
    var playsOutWhilePaused: Bool { get }
    /// Blocks until every frame handed over has been heard. Throws if the output fails meanwhile.
    func drain() throws(AudioSinkError)
    /// Starts pulling again after a render reported the end of the stream and new frames were written.
    func resumeAfterEndOfStream()
    /// Frames handed over but not yet heard.
    func latencyFrames() -> Int
    /// Stops output and releases the stream. Safe to call twice.
    func stop()
    /// Connects again after a failure (the server went away, or was not there yet): returns once the output can
    /// ``start(format:renderer:paused:)`` again, or throws the error that names what is still missing. Does nothing
    /// when connected. Called by the engine with backoff, never on the render thread.
    func reconnect() throws(AudioSinkError)
    /// Asks for `gain` (linear: 0 silent, 1 as decoded) on what is heard. A sink whose server has a volume of its own
    /// applies it there, to frames already handed over too, and turns off `Renderer/appliesGain` on the renderer
    /// of each stream it starts; the others leave the gain to the renderer. Remembered across streams and
    /// reconnections.
    func setGain(_ gain: Float)
    /// Sets the closure told about failures after start.
    func setFailureHandler(_ handler: @escaping @Sendable (AudioSinkError) -> Void)
    /// Sets the closure told `true` when the server suspends the device the stream plays on, and `false` when it
    /// plays again. Called on a thread of the sink's, which the handler must not call back into.
    func setSuspensionHandler(_ handler: @escaping @Sendable (Bool) -> Void)
    /// Sets the closure told each time the sink learns anew where its listener stands (a sound server's timing
    /// report): a ``latencyFrames()`` that stood still, because the stream had not yet started or been reported
    /// playing, may move from then on. Called on a thread of the sink's, which the handler must not call back into.
    func setTimingHandler(_ handler: @escaping @Sendable () -> Void)
}

extension AudioSink {
    /// Flushes and returns nil: the count is not known. On the caller's thread, as ``flush()``.
    public func flushCountingDroppedFrames() -> Int? {
        flush()
        return nil
    }

    /// `Renderer/defaultBufferFrames`: with a sound server's own buffer it rides out a slow disk, and it keeps a
    /// playing daemon's memory down.
    public var decodeAheadFrames: Int { Renderer.defaultBufferFrames }

    /// A pause stops what the sink holds from being heard.
    public var playsOutWhilePaused: Bool { false }

    /// A sink with no volume of its own leaves the gain to the renderer, which multiplies the samples.
    public func setGain(_ gain: Float) {}

    /// A sink whose device is never suspended (an in-process sink) never calls the handler.
    public func setSuspensionHandler(_ handler: @escaping @Sendable (Bool) -> Void) {}

    /// A sink whose latency changes only as it renders has no reports to tell of: it never calls the handler.
    public func setTimingHandler(_ handler: @escaping @Sendable () -> Void) {}
}

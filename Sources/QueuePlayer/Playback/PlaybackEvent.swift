/// Something that happened to the queue, in the order a listener hears it.
///
/// Events are posted from the engine's event thread, never from the audio callback, and only once what they
/// describe is audible: an item "starts" when its first frame leaves the sink, not when it is decoded.
public enum PlaybackEvent: Sendable, Equatable {
    /// An item was opened for playing: its format, exact length and tags are known. Posted when decoding reaches
    /// it, ahead of hearing it (again after a skip, seek or edit re-opens it); the one event not posted in order of
    /// hearing.
    case itemReady(OpenedEntry)
    /// The first frame of an item is being heard.
    case itemStarted(OpenedEntry)
    /// The item's metadata changed from this point of it on (a stream's title, sent by its server), posted as the
    /// first frame after the change is heard, not when the title arrived (AVFoundation: timed metadata).
    case metadataChanged(QueueEntry, ItemMetadata)
    /// A live stream's connection was lost and made again at its live edge: what it sent for `seconds` meanwhile
    /// was missed. Posted as the first frame after the gap is heard.
    case liveGap(QueueEntry, seconds: Double)
    /// The last frame of an item has been heard (AVFoundation: did play to end time).
    case itemFinished(QueueEntry)
    /// An item could not be played to its end: it could not be opened, or decoding stopped early. Posted where the
    /// item would have been heard, so the order of events is the order of the queue
    /// (AVFoundation: failed to play to end time).
    case itemFailed(QueueEntry, DecoderError)
    /// Every queued item has been heard and the output has drained.
    case queueFinished
    /// The audio output failed (the PulseAudio server went away, or was not there to start with). Nothing is heard;
    /// the engine reconnects with backoff and every command still works meanwhile.
    case outputFailed(AudioSinkError)
    /// The output is back after ``outputFailed(_:)``: playback goes on from the frame heard when it went away
    /// (if playback is wanted).
    case outputRestored
    /// The sound server suspended the device the stream plays on (`pactl suspend-sink`, a device taken away for a
    /// while): nothing is heard and the position stands still. The stream stays open.
    case outputSuspended
    /// The device is playing again after ``outputSuspended``: playback goes on where it stood.
    case outputResumed
    /// Playback stalled: the remote item being decoded ran out of data, and everything decoded before has been
    /// heard. The output pauses (nothing is heard, the position stands still) until enough has arrived; posted
    /// when the silence would begin (AVFoundation: playback stalled).
    case stalled(QueueEntry)
    /// A wait for a remote item's data is over (after a stall, or a play that found too little buffered): the
    /// output plays.
    case resumedAfterBuffering
}

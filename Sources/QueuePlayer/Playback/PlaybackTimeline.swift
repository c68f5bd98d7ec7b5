/// Maps positions in the renderer's frame stream to queue entries, and turns the audible position into events.
///
/// The decoding thread appends segments as it writes items into the ring; the event thread advances the audible
/// position. A plain value: the engine keeps it under its lock.
struct PlaybackTimeline {
    struct EntrySpan {
        let entry: QueueEntry
        /// Nil for an item that failed before producing any frame.
        let info: OpenedEntry?
        /// Ring frame of the item's first frame.
        let startFrame: Int
        /// Ring frame just past the item's last frame; nil while it is still being decoded.
        var endFrame: Int?
        /// Why the item stopped before its end, if it did.
        var failure: DecoderError?
        var hasStarted = false
        /// The item frame playback began at: 0, or where a seek landed.
        var resumeFrame = 0
        /// Stream marks (titles, gaps) not yet heard, each with the ring frame it applies from, in order.
        var marks: [(frame: Int, kind: StreamMark.Kind)] = []

        /// Ring frame of the first frame written: the item's first, or the one playback began at.
        var firstWrittenFrame: Int { startFrame + resumeFrame }
    }

    /// Segments not yet fully reported, in stream order.
    private(set) var segments: [EntrySpan] = []

    var isEmpty: Bool { segments.isEmpty }

    /// The item being heard: started and not finished.
    var current: EntrySpan? { segments.first { $0.hasStarted } }

    /// The item being heard or, before the first is heard, the one about to be.
    var playing: EntrySpan? { current ?? segments.first }

    /// The entry being decoded: the last segment, while its end is not known.
    var decoding: QueueEntry? { segments.last.flatMap { $0.endFrame == nil ? $0.entry : nil } }

    /// The entries decoded to their end without a failure and not yet heard to it, in order.
    var decodedToTheirEnd: [QueueEntry] { segments.filter { $0.endFrame != nil && $0.failure == nil }.map(\.entry) }

    /// Every entry still to be heard in full, the playing one first.
    var entries: [QueueEntry] { segments.map(\.entry) }

    /// Starts a segment for an opened item whose frame 0 falls on ring frame `frame` (earlier than the ring's
    /// write position when playback resumes inside the item). A resumed item (`announcesStart` false, after a seek)
    /// counts as started at once and posts no second start.
    mutating func begin(
        _ info: OpenedEntry, atFrame frame: Int, resumingAt resumeFrame: Int = 0, announcesStart: Bool = true
    ) {
        segments.append(
            EntrySpan(
                entry: info.entry, info: info, startFrame: frame, hasStarted: !announcesStart, resumeFrame: resumeFrame)
        )
    }

    /// Ends the open segment at `frame`, with `failure` when decoding stopped early.
    mutating func endCurrent(atFrame frame: Int, failure: DecoderError?) {
        guard let last = segments.indices.last, segments[last].endFrame == nil else { return }
        segments[last].endFrame = frame
        segments[last].failure = failure
    }

    /// Notes stream marks met while decoding the open segment, at its item frames.
    mutating func noteMarks(_ marks: [StreamMark]) {
        guard let last = segments.indices.last, segments[last].endFrame == nil else { return }
        let start = segments[last].startFrame
        segments[last].marks += marks.map { (start + $0.frame, $0.kind) }
    }

    /// Records an item that failed to open, at ring frame `frame`: reported once everything before it is heard.
    mutating func recordFailure(_ entry: QueueEntry, _ error: DecoderError, atFrame frame: Int) {
        segments.append(EntrySpan(entry: entry, info: nil, startFrame: frame, endFrame: frame, failure: error))
    }

    /// Forgets the segments after the first that ends at ring frame `frame` (the audio decoded past it was taken
    /// back from the ring).
    mutating func removeSegments(after frame: Int) {
        guard let index = segments.firstIndex(where: { $0.endFrame == frame }) else { return }
        segments.removeSubrange((index + 1)...)
    }

    /// Forgets every segment (the queue was cleared or the stream restarted).
    mutating func removeAll() {
        segments.removeAll()
    }

    /// Marks the first segment started once ring frame `frame` is heard past its first frame written (its resume
    /// frame, for an item started part-way), and returns its ``PlaybackEvent/itemStarted(_:)`` (only the first time).
    mutating func startFirst(ifHeardAt frame: Int) -> PlaybackEvent? {
        guard let segment = segments.first, !segment.hasStarted, let info = segment.info,
            frame > segment.firstWrittenFrame
        else { return nil }
        segments[0].hasStarted = true
        return .itemStarted(info)
    }

    /// Takes the first segment's next stream mark once ring frame `frame` is heard past the frame it applies from
    /// (its item started), and returns its ``PlaybackEvent/metadataChanged(_:_:)`` or
    /// ``PlaybackEvent/liveGap(_:seconds:)``.
    mutating func tellMark(ifHeardAt frame: Int) -> PlaybackEvent? {
        guard let segment = segments.first, segment.hasStarted, let mark = segment.marks.first, frame > mark.frame
        else { return nil }
        segments[0].marks.removeFirst()
        switch mark.kind {
        case .metadata(let metadata): return .metadataChanged(segment.entry, metadata)
        case .gap(let seconds): return .liveGap(segment.entry, seconds: seconds)
        }
    }

    /// Removes the first segment once its end has been heard at ring frame `frame`, and returns its
    /// ``PlaybackEvent/itemFinished(_:)`` or ``PlaybackEvent/itemFailed(_:_:)``.
    mutating func finishFirst(ifHeardAt frame: Int) -> PlaybackEvent? {
        guard let segment = segments.first, let end = segment.endFrame, frame >= end,
            segment.info == nil || segment.hasStarted || segment.firstWrittenFrame == end
        else { return nil }
        segments.removeFirst()
        return segment.failure.map { .itemFailed(segment.entry, $0) } ?? .itemFinished(segment.entry)
    }

    /// The ring frame whose hearing makes the next event due, or nil when that depends on decoding still to come.
    var nextEventFrame: Int? {
        guard let segment = segments.first else { return nil }
        if !segment.hasStarted, segment.info != nil, segment.endFrame != segment.firstWrittenFrame {
            return segment.firstWrittenFrame + 1
        }
        if let mark = segment.marks.first {
            return min(mark.frame + 1, segment.endFrame ?? .max)
        }
        return segment.endFrame
    }
}

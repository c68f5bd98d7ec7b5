/// A span of an item's timeline, as AVFoundation's `CMTimeRange`: where it starts and how long it lasts.
///
/// A value type, safe to pass between threads.
public struct MediaTimeRange: Sendable, Hashable {
    /// The first time in the range.
    public var start: MediaTime
    /// The range's length.
    public var duration: MediaTime

    /// A range from `start` lasting `duration`.
    public init(start: MediaTime, duration: MediaTime) {
        self.start = start
        self.duration = duration
    }

    /// The time just past the range.
    public var end: MediaTime { start + duration }
}

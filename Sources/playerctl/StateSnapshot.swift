import FoundationEssentials
import QueuePlayer

/// The queue, the current item and the position, as saved on entering the background (in a JSON file until the
/// state store exists).
struct StateSnapshot: Codable, Equatable {
    /// The queued files, the current one first.
    var queue: [String]
    /// The item being heard, if any.
    var currentItem: String?
    /// Seconds into the current item.
    var position: Double
    /// Whether playback was wanted.
    var isPlaying: Bool

    init(engine: PlaybackEngine) {
        let status = engine.status()
        queue = engine.queue().map(\.url.path)
        currentItem = status.current?.entry.url.path
        position = status.elapsed
        isPlaying = engine.isPlaybackRequested
    }

    /// Writes the snapshot to `url` atomically, creating its folder.
    func write(to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: url, options: .atomic)
    }
}

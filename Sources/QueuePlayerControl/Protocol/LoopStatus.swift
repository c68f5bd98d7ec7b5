/// What plays again, in MPRIS's words (its `LoopStatus`), which the standard playerctl's `loop` verb also uses:
/// the daemon's ``QueuePlayer/RepeatMode`` as its front ends name it.
package enum LoopStatus: String, Codable, Sendable, CaseIterable {
    /// Nothing repeats.
    case none = "None"
    /// The current item repeats.
    case track = "Track"
    /// The whole queue repeats.
    case playlist = "Playlist"

    /// The status named `name`, in any case (`track`, `Track`); nil for another word.
    package init?(named name: String) {
        guard let status = Self.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
            return nil
        }
        self = status
    }
}

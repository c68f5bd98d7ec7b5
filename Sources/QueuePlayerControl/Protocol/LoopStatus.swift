/// What plays again, in MPRIS's words (its `LoopStatus`), which the standard playerctl's `loop` verb also uses:
/// the daemon's ``QueuePlayer/RepeatMode`` as its front ends name it.
package enum LoopStatus: String, Codable, Sendable, NamedSetting {
    /// Nothing repeats.
    case none = "None"
    /// The current item repeats.
    case track = "Track"
    /// The whole queue repeats.
    case playlist = "Playlist"
}

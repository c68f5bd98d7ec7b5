extension QueuePlayer {
    /// Which loudness correction an item's ReplayGain tags apply (MPD's `replay_gain_mode`). libmpg123 reads the
    /// gains from ID3v2 `RVA2` and `TXXX` `replaygain_*` frames and from a LAME header, and lowers a gain where the
    /// peak it is given would clip. An item without such tags plays as decoded. A value, safe to pass between threads;
    /// set it on ``QueuePlayer/replayGainMode`` from any thread.
    public enum ReplayGainMode: String, Sendable, Equatable, CaseIterable {
        /// As decoded (the default).
        case off
        /// Each item at its own (track) gain.
        case track
        /// Each item at its album's gain, so that an album's quiet songs stay quieter than its loud ones; at its
        /// track gain where it has no album gain.
        case album
        /// Album gain while the queue plays in order, track gain while it is shuffled (``ShuffleMode/items``), as
        /// MPD's `auto`.
        case auto

        /// The gain the decoder applies under this mode while the queue plays in `shuffleMode`.
        func applied(shuffleMode: ShuffleMode) -> AppliedReplayGain {
            switch self {
            case .off: .none
            case .track: .track
            case .album: .album
            case .auto: shuffleMode == .items ? .track : .album
            }
        }
    }
}

/// The ReplayGain a decoder applies: a ``QueuePlayer/ReplayGainMode`` with `auto` settled by the shuffle mode.
package enum AppliedReplayGain: Sendable, Equatable {
    case none
    case track
    case album
}

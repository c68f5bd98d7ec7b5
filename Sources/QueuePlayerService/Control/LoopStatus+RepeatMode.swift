import QueuePlayer
import QueuePlayerControl

extension LoopStatus {
    /// The loop status that names `mode`.
    package init(_ mode: QueuePlayer.RepeatMode) {
        switch mode {
        case .off: self = .none
        case .one: self = .track
        case .all: self = .playlist
        }
    }

    /// The player's repeat mode this status names.
    package var repeatMode: QueuePlayer.RepeatMode {
        switch self {
        case .none: .off
        case .track: .one
        case .playlist: .all
        }
    }
}

import QueuePlayer
import QueuePlayerControl

extension ReplayGain {
    /// The setting that names `mode`.
    package init(_ mode: QueuePlayer.ReplayGainMode) {
        switch mode {
        case .off: self = .off
        case .track: self = .track
        case .album: self = .album
        case .auto: self = .auto
        }
    }
}

extension QueuePlayer.ReplayGainMode {
    /// The player's mode that `setting` names.
    package init(_ setting: ReplayGain) {
        switch setting {
        case .off: self = .off
        case .track: self = .track
        case .album: self = .album
        case .auto: self = .auto
        }
    }
}

import QueuePlayerControl

/// The play modes: `repeat` and `single` (`0`, `1`, `oneshot`), which the player has as MPD has them (see
/// ``PlayerController/modes``): `repeat 1` repeats the queue, and with `single 1` the current song; `single 1` without
/// `repeat` pauses after the current song, at the next one's start; `oneshot` does either once.
extension MPDCommandRunner {
    /// MPD's `repeat 0|1`.
    func setRepeat(_ on: Bool) throws(MPDError) -> String {
        try carryOut(.modes(repeat: on, single: nil))
    }

    /// MPD's `single 0|1|oneshot`.
    func setSingle(_ argument: String) throws(MPDError) -> String {
        let modes: [String: SingleMode] = ["0": .off, "1": .on, "oneshot": .once]
        guard let single = modes[argument] else {
            throw MPDError(.argument, "Unrecognized single mode, expected 0, 1, or oneshot")
        }
        return try carryOut(.modes(repeat: nil, single: single))
    }

    /// MPD's `replay_gain_mode off|track|album|auto`: the names as MPD spells them, in lower case only.
    func setReplayGainMode(_ argument: String) throws(MPDError) -> String {
        guard let mode = ReplayGain.allCases.first(where: { Self.replayGainModeName($0) == argument }) else {
            throw MPDError(.argument, "Unrecognized replay gain mode")
        }
        return try carryOut(.replayGain(mode))
    }

    /// The name MPD gives `mode` (`replay_gain_status`).
    static func replayGainModeName(_ mode: ReplayGain) -> String { mode.rawValue.lowercased() }

    /// The `single` field of `status`.
    static func singleField(_ snapshot: PlayerSnapshot) -> String {
        switch snapshot.single {
        case .off: "0"
        case .on: "1"
        case .once: "oneshot"
        }
    }
}

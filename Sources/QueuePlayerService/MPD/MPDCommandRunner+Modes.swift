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

    /// The `single` field of `status`.
    static func singleField(_ snapshot: PlayerSnapshot) -> String {
        switch snapshot.single {
        case .off: "0"
        case .on: "1"
        case .once: "oneshot"
        }
    }
}

import QueuePlayerControl

/// The play modes: `repeat` and `single`, which together are the player's repeat mode (its loop status). `repeat 1`
/// repeats the queue; `single 1` with it repeats the current song. `single` without `repeat` (mpd: stop after the
/// current song) and `single oneshot` are refused, named, until the player has them.
extension MPDCommandRunner {
    /// MPD's `repeat 0|1`: on, the queue repeats (the current song, if `single` is on); off, nothing does.
    func setRepeat(_ on: Bool) throws(MPDError) -> String {
        let loop = controller.mpdState().snapshot.loop
        switch (on, loop) {
        case (true, .none): return try carryOut(.loop(.playlist))
        case (false, .playlist), (false, .track): return try carryOut(.loop(LoopStatus.none))
        default: return ""
        }
    }

    /// MPD's `single 0|1|oneshot`: on (with `repeat`), the current song repeats; off, the queue does.
    func setSingle(_ argument: String) throws(MPDError) -> String {
        guard argument != "oneshot" else {
            throw MPDError(.argument, "single oneshot is not supported yet; use single 1 with repeat 1")
        }
        guard argument == "0" || argument == "1" else {
            throw MPDError(.argument, "Unrecognized single mode, expected 0, 1, or oneshot")
        }
        let loop = controller.mpdState().snapshot.loop
        switch (argument == "1", loop) {
        case (true, .playlist): return try carryOut(.loop(.track))
        case (true, .none):
            throw MPDError(
                .argument,
                "single without repeat (stop after the current song) is not supported yet; with repeat 1, single 1 "
                    + "repeats the current song")
        case (false, .track): return try carryOut(.loop(.playlist))
        default: return ""
        }
    }
}

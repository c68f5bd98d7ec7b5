import QueuePlayer
import QueuePlayerControl

/// The play modes as MPD has them (`repeat`, and `single`: on, off or once) on the player's repeat mode and its
/// action at an item's end. Repeat with single is the player's `.one`, repeat alone `.all`; single alone holds each
/// item at its end (`actionAtItemEnd` `.pause`), and the next item is then made current at its start, paused, as mpd
/// pauses at the border between two songs.
extension PlayerController {
    /// Whether something repeats, and the single mode. Any thread.
    var modes: (repeats: Bool, single: SingleMode) {
        let single: SingleMode = state.withLock { $0.singleOnce } ? .once : .on
        switch (player.repeatMode, player.actionAtItemEnd) {
        case (.one, _): return (true, single)
        case (.all, _): return (true, .off)
        case (.off, .advance): return (false, .off)
        case (.off, _): return (false, single)
        }
    }

    /// Sets what MPRIS's `LoopStatus` and `playerctl loop` name: `Track` is repeat with single (once stays once),
    /// `Playlist` repeat alone, `None` neither (single off too when the item repeated). On the command path.
    func setLoop(_ status: LoopStatus) {
        let now = modes
        switch status {
        case .none: setModes(repeats: false, single: now.repeats ? .off : now.single)
        case .track: setModes(repeats: true, single: now.single == .once ? .once : .on)
        case .playlist: setModes(repeats: true, single: .off)
        }
    }

    /// Sets the modes given (nil: as they are). On the command path.
    func setModes(repeats: Bool?, single: SingleMode?) {
        let now = modes
        let repeats = repeats ?? now.repeats
        let single = single ?? now.single
        state.withLock { $0.singleOnce = single == .once }
        let repeatMode: QueuePlayer.RepeatMode = repeats ? (single == .off ? .all : .one) : .off
        let endAction: QueuePlayer.ActionAtItemEnd = !repeats && single != .off ? .pause : .advance
        // Never both at once (an item that repeats, held at its end): the one that ends comes first.
        if endAction == .advance {
            if player.actionAtItemEnd != endAction { player.actionAtItemEnd = endAction }
            if player.repeatMode != repeatMode { player.repeatMode = repeatMode }
        } else {
            if player.repeatMode != repeatMode { player.repeatMode = repeatMode }
            if player.actionAtItemEnd != endAction { player.actionAtItemEnd = endAction }
        }
    }

    /// An item played to its end. Held there in single mode, the player has paused: the next item is made current at
    /// its start, still paused (nothing, after the last), and a single mode of `once` ends. Under repeat, a `once`
    /// ends as the item's repetition starts (``singleItemStarted()``). Takes the command path's turn.
    func singleItemFinished(_ entry: QueueEntry) {
        guard player.actionAtItemEnd == .pause else { return }
        commandPath.take { () -> Void in
            guard player.actionAtItemEnd == .pause, let held = player.currentItem, player.entry(for: held) == entry
            else { return }
            player.advanceToNextItem()
            if modes.single == .once { setModes(repeats: false, single: .off) }
        }
    }

    /// An item started: under repeat with single `once`, it is the repetition (or the item skipped to), and single
    /// is off from now on. Takes the command path's turn.
    func singleItemStarted() {
        guard state.withLock({ $0.singleOnce }) else { return }
        commandPath.take { () -> Void in
            let now = modes
            if now.repeats, now.single == .once { setModes(repeats: true, single: .off) }
        }
    }
}

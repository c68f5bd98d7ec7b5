import QueuePlayer

/// What a change of the player touched, as a glance at it shows (``PlayerController/Glance``): told to the observers
/// that answer at once (MPD's idling clients) before the snapshot is taken and compared.
package struct PlayerAspects: OptionSet, Sendable {
    package let rawValue: UInt8

    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The volume.
    package static let volume = Self(rawValue: 1 << 0)
    /// Playing, paused or stopped; the current item; a seek in it.
    package static let playback = Self(rawValue: 1 << 1)
    /// Repeat, single, shuffle or replay gain.
    package static let modes = Self(rawValue: 1 << 2)
    /// The number of entries queued.
    package static let queue = Self(rawValue: 1 << 3)
}

extension PlayerController {
    /// The parts of the player's state a few locked reads show, without tags, times or the queue's entries. Each is
    /// also in the snapshot or the queue listing, so a glance that changed is always followed by a snapshot that
    /// changed.
    struct Glance: Equatable {
        var volume: Float
        var playback: QueuePlayer.PlaybackState
        var current: ObjectIdentifier?
        var jumps: Int
        var repeatMode: QueuePlayer.RepeatMode
        var endAction: QueuePlayer.ActionAtItemEnd
        var singleOnce: Bool
        var shuffleMode: QueuePlayer.ShuffleMode
        var replayGainMode: QueuePlayer.ReplayGainMode
        var entryCount: Int

        /// What differs from `old`.
        func changes(since old: Glance) -> PlayerAspects {
            var changed: PlayerAspects = []
            if volume != old.volume { changed.insert(.volume) }
            if playback != old.playback || current != old.current || jumps != old.jumps { changed.insert(.playback) }
            if repeatMode != old.repeatMode || endAction != old.endAction || singleOnce != old.singleOnce
                || shuffleMode != old.shuffleMode || replayGainMode != old.replayGainMode
            {
                changed.insert(.modes)
            }
            if entryCount != old.entryCount { changed.insert(.queue) }
            return changed
        }
    }

    /// A glance at the player now. Any thread.
    func glance() -> Glance {
        let (jumps, singleOnce) = state.withLock { ($0.jumps, $0.singleOnce) }
        return Glance(
            volume: player.volume, playback: player.playbackState,
            current: player.currentItem.map(ObjectIdentifier.init), jumps: jumps, repeatMode: player.repeatMode,
            endAction: player.actionAtItemEnd, singleOnce: singleOnce, shuffleMode: player.shuffleMode,
            replayGainMode: player.replayGainMode, entryCount: player.entryCount)
    }
}

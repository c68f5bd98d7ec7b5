import QueuePlayer
import QueuePlayerControl

/// What an MPD client's `idle` waits for, named and ordered as MPD names and prints them.
package enum MPDSubsystem: String, CaseIterable, Sendable {
    case database
    case storedPlaylist = "stored_playlist"
    case playlist, player, mixer, output, options, partition, sticker, subscription, message, neighbor, mount, update

    /// What changed between `old` and `new` (each a snapshot with the queue read with it): `playlist` when the queue
    /// did; `player` when playback started, paused or stopped, the current item changed, it was sought in, its tags
    /// changed (a station's title), or `status`'s `error` came or went; `mixer` when the volume did; `options` when
    /// the repeat, single or shuffle mode did. Everything when there is no `old`.
    package static func changes(from old: MPDPlayerState?, to new: MPDPlayerState) -> Set<MPDSubsystem> {
        guard let old else { return [.playlist, .player, .mixer, .options] }
        var changed: Set<MPDSubsystem> = []
        if old.queue != new.queue || old.priorities != new.priorities { changed.insert(.playlist) }
        let (was, now) = (old.snapshot, new.snapshot)
        if was.status != now.status || was.current != now.current || was.jumps != now.jumps || old.error != new.error {
            changed.insert(.player)
        }
        if was.volume != now.volume { changed.insert(.mixer) }
        if was.loop != now.loop || was.single != now.single || was.shuffle != now.shuffle
            || was.replayGain != now.replayGain
        {
            changed.insert(.options)
        }
        return changed
    }
}

/// A snapshot of the player with the queue read with it: what every MPD answer is made from.
package struct MPDPlayerState: Equatable, Sendable {
    package var snapshot: PlayerSnapshot
    package var queue: [QueueEntry]
    /// The priority of each entry of ``queue`` that has one, by entry id (`Prio`).
    package var priorities: [Int: UInt8]
    /// The current item's decoded format, once it is open (`status` reads it; no change is told for it).
    package var format: AudioFormat?
    /// The current item's bit rate in bits a second, once it is open (``PlayerItem/estimatedDataRate``).
    package var bitRate: Int?

    package init(
        snapshot: PlayerSnapshot, queue: [QueueEntry], priorities: [Int: UInt8] = [:], format: AudioFormat? = nil,
        bitRate: Int? = nil
    ) {
        self.snapshot = snapshot
        self.queue = queue
        self.priorities = priorities
        self.format = format
        self.bitRate = bitRate
    }

    /// What `status` says in `error`: why nothing is heard though playback is wanted (a station being reconnected,
    /// the audio server away), in `playerctl status`'s words; nil while sound is only being buffered, or nothing is
    /// queued.
    package var error: String? {
        guard let waiting = snapshot.waiting, waiting != "no item to play", waiting != "buffering" else { return nil }
        return waiting
    }
}

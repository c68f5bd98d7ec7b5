import QueuePlayer
import QueuePlayerControl

/// What an MPD client's `idle` waits for: a set of MPD's subsystems, a bit each, as MPD keeps them (a change told to
/// every client is a union, an idle's answer an intersection, without hashing).
package struct MPDSubsystems: OptionSet, Sendable {
    package let rawValue: UInt16

    package init(rawValue: UInt16) { self.rawValue = rawValue }

    package static let database = Self(rawValue: 1 << 0)
    package static let storedPlaylist = Self(rawValue: 1 << 1)
    package static let playlist = Self(rawValue: 1 << 2)
    package static let player = Self(rawValue: 1 << 3)
    package static let mixer = Self(rawValue: 1 << 4)
    package static let output = Self(rawValue: 1 << 5)
    package static let options = Self(rawValue: 1 << 6)
    package static let partition = Self(rawValue: 1 << 7)
    package static let sticker = Self(rawValue: 1 << 8)
    package static let subscription = Self(rawValue: 1 << 9)
    package static let message = Self(rawValue: 1 << 10)
    package static let neighbor = Self(rawValue: 1 << 11)
    package static let mount = Self(rawValue: 1 << 12)
    package static let update = Self(rawValue: 1 << 13)

    /// Each subsystem with its name, in the order MPD prints them (its bits' order).
    private static let named: [(subsystem: Self, name: String)] = [
        (.database, "database"), (.storedPlaylist, "stored_playlist"), (.playlist, "playlist"), (.player, "player"),
        (.mixer, "mixer"), (.output, "output"), (.options, "options"), (.partition, "partition"),
        (.sticker, "sticker"), (.subscription, "subscription"), (.message, "message"), (.neighbor, "neighbor"),
        (.mount, "mount"), (.update, "update"),
    ]

    /// Every subsystem: what an `idle` without names waits for.
    package static let all = Self(rawValue: (1 << 14) - 1)

    /// The subsystem MPD names `name` (`stored_playlist`), or nil when MPD has none of that name.
    package init?(name: String) {
        guard let found = Self.named.first(where: { $0.name == name }) else { return nil }
        self = found.subsystem
    }

    /// Each subsystem with its line in an `idle`'s answer.
    private static let changedLines = named.map { (subsystem: $0.subsystem, line: "changed: \($0.name)\n") }

    /// The answer to an `idle` told these: a `changed:` line for each, in MPD's order, then `OK`.
    package var idleAnswer: String {
        var answer = ""
        for (subsystem, line) in Self.changedLines where contains(subsystem) { answer += line }
        return answer + "OK\n"
    }

    /// The subsystems a change of the player's `aspects` changed: the volume is `mixer`, playback `player`, the modes
    /// `options`, the queue `playlist`.
    package init(_ aspects: PlayerAspects) {
        self = []
        if aspects.contains(.volume) { insert(.mixer) }
        if aspects.contains(.playback) { insert(.player) }
        if aspects.contains(.modes) { insert(.options) }
        if aspects.contains(.queue) { insert(.playlist) }
    }

    /// What changed between `old` and `new` (each a snapshot with the queue read with it): `playlist` when the queue
    /// did; `player` when playback started, paused or stopped, the current item changed, it was sought in, its tags
    /// changed (a station's title), or `status`'s `error` came or went; `mixer` when the volume did; `options` when
    /// the repeat, single or shuffle mode did. Everything when there is no `old`.
    package static func changes(from old: MPDPlayerState?, to new: MPDPlayerState) -> MPDSubsystems {
        guard let old else { return [.playlist, .player, .mixer, .options] }
        var changed: MPDSubsystems = []
        if old.listing != new.listing { changed.insert(.playlist) }
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
    /// The queue as it was read with the snapshot.
    package var listing: QueueListing
    /// The current item's decoded format, once it is open (`status` reads it; no change is told for it).
    package var format: AudioFormat?
    /// The current item's bit rate in bits a second, once it is open (``PlayerItem/estimatedDataRate``).
    package var bitRate: Int?

    /// The state `snapshot` and a queue of `queue` with those of its entries in `priorities` and `tags` given theirs.
    package init(
        snapshot: PlayerSnapshot, queue: [QueueEntry], priorities: [Int: UInt8] = [:], tags: [Int: [EntryTag]] = [:],
        format: AudioFormat? = nil, bitRate: Int? = nil
    ) {
        self.init(
            snapshot: snapshot, listing: QueueListing(entries: queue, priorities: priorities, tags: tags),
            format: format, bitRate: bitRate)
    }

    /// The state `snapshot` and the queue `listing` give, with the current item's `format` and `bitRate`.
    package init(snapshot: PlayerSnapshot, listing: QueueListing, format: AudioFormat? = nil, bitRate: Int? = nil) {
        self.snapshot = snapshot
        self.listing = listing
        self.format = format
        self.bitRate = bitRate
    }

    /// The queue's entries, the current one first.
    package var queue: [QueueEntry] { listing.entries }
    /// The priority of each entry of ``queue`` that has one, by entry id (`Prio`).
    package var priorities: [Int: UInt8] { listing.priorities }
    /// The tags given to each entry of ``queue`` that has some, by entry id (`addtagid`).
    package var tags: [Int: [EntryTag]] { listing.tags }
    /// The part of its song each entry of ``queue`` playing a part plays, by entry id (`rangeid`).
    package var ranges: [Int: MediaTimeRange] { listing.ranges }

    /// What `status` says in `error`: why nothing is heard though playback is wanted (a station being reconnected,
    /// the audio server away), in `playerctl status`'s words; nil while sound is only being buffered, or nothing is
    /// queued.
    package var error: String? {
        guard let waiting = snapshot.waiting, waiting != "no item to play", waiting != "buffering" else { return nil }
        return waiting
    }
}

import FoundationEssentials
import QueuePlayer
import QueuePlayerControl

/// What MPRIS publishes, derived from one snapshot (the one the control socket sends) and the queue read with it,
/// and what changed between two of them. Plain values; no D-Bus here.
package struct MPRISState: Equatable {
    package var snapshot: PlayerSnapshot
    package var queue: [QueueEntry]

    /// A snapshot and the queue read with it.
    package init(snapshot: PlayerSnapshot, queue: [QueueEntry]) {
        self.snapshot = snapshot
        self.queue = queue
    }

    /// True when there is an item to play, pause or seek: one current, or one queued. Queued, not only heard:
    /// between two items (a skip, a seek) nothing is heard for a few milliseconds, and clients that read a `Can*`
    /// property then must not see the player as unable.
    package var hasItem: Bool { snapshot.current != nil || !queue.isEmpty }

    /// True when there is an item to seek in and it can be: not a live stream, nor a file from a server without
    /// byte ranges.
    package var canSeek: Bool { hasItem && snapshot.current?.isSeekable != false }

    /// The object path MPRIS uses for a queue entry: stable for as long as the entry is queued.
    package static func trackPath(_ id: Int) -> String { "/org/mpris/MediaPlayer2/Track/\(id)" }

    /// The path meaning "no track" in TrackList calls.
    package static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

    /// The queue id in a track path, or nil.
    package static func entryID(_ path: String) -> Int? {
        guard path.hasPrefix("/org/mpris/MediaPlayer2/Track/") else { return nil }
        return Int(path.dropFirst("/org/mpris/MediaPlayer2/Track/".count))
    }

    /// One metadata value, typed as D-Bus needs it.
    package enum Value: Equatable {
        case objectPath(String)
        case int64(Int64)
        case string(String)
        case strings([String])
    }

    /// `Metadata` for the current item (empty without one).
    package var metadata: [(String, Value)] {
        guard let track = snapshot.current else { return [] }
        var fields: [(String, Value)] = [
            ("mpris:trackid", .objectPath(Self.trackPath(track.id))),
            ("xesam:title", .string(track.title ?? URL(itemLocation: track.url).lastPathComponent)),
            ("xesam:url", .string(URL(itemLocation: track.url).absoluteString)),
        ]
        // A live stream has no length: MPRIS leaves the key out.
        if let length = track.length { fields.insert(("mpris:length", .int64(Int64(length * 1_000_000))), at: 1) }
        if !track.artists.isEmpty { fields.append(("xesam:artist", .strings(track.artists))) }
        if let album = track.album { fields.append(("xesam:album", .string(album))) }
        if let published = track.published { fields.append(("xesam:contentCreated", .string(published))) }
        if let waiting = snapshot.waiting { fields.append((Self.waitingKey, .string(waiting))) }
        return fields
    }

    /// The metadata key that says, while the current item waits (for its server, for the output), what for: the
    /// snapshot's `waiting`, such as "reconnecting to radio.example.org: connection refused, next try in 2 s". MPRIS
    /// has no property for it; clients show every metadata key they are given (`playerctl metadata`).
    package static let waitingKey = "queueplayer:waiting"

    /// Metadata for any queued entry: the current one's in full, the others' from their file.
    package func metadata(for entry: QueueEntry) -> [(String, Value)] {
        if entry.id == snapshot.current?.id { return metadata }
        return [
            ("mpris:trackid", .objectPath(Self.trackPath(entry.id))),
            ("xesam:title", .string(entry.url.lastPathComponent)),
            ("xesam:url", .string(entry.url.absoluteString)),
        ]
    }

    /// The Player properties whose values differ between `old` and `self` (never Position).
    package func changedPlayerProperties(since old: MPRISState) -> [String] {
        var changed: [String] = []
        if snapshot.status != old.snapshot.status { changed.append("PlaybackStatus") }
        if snapshot.current != old.snapshot.current || snapshot.waiting != old.snapshot.waiting {
            changed.append("Metadata")
        }
        if hasItem != old.hasItem { changed += ["CanGoPrevious", "CanPlay", "CanPause"] }
        if canSeek != old.canSeek { changed.append("CanSeek") }
        if snapshot.volume != old.snapshot.volume { changed.append("Volume") }
        if snapshot.hasNext != old.snapshot.hasNext { changed.append("CanGoNext") }
        if snapshot.loop != old.snapshot.loop { changed.append("LoopStatus") }
        if snapshot.shuffle != old.snapshot.shuffle { changed.append("Shuffle") }
        return changed
    }

    /// The most entries added and removed that TrackList signals one by one; a larger edit (a folder added) is
    /// signalled as a replacement, which the MPRIS specification leaves to the player to choose: one signal for
    /// listeners to re-read instead of a signal per entry, each with its metadata.
    package static let largestEditSignalledByEntry = 100

    /// TrackList changes from `old` to `self`: a replacement when nothing of the old queue is left or more than
    /// ``largestEditSignalledByEntry`` entries came and went, else the entries removed and the entries added (each
    /// with the entry before it, or nil at the front).
    package enum TrackListChange: Equatable {
        case replaced
        case edited(removed: [Int], added: [(QueueEntry, after: Int?)])

        package static func == (left: TrackListChange, right: TrackListChange) -> Bool {
            switch (left, right) {
            case (.replaced, .replaced): true
            case (.edited(let a, let b), .edited(let c, let d)):
                a == c && b.map { [$0.0.id, $0.after ?? -1] } == d.map { [$0.0.id, $0.after ?? -1] }
            default: false
            }
        }
    }

    package func trackListChange(since old: MPRISState) -> TrackListChange? {
        let oldIDs = Set(old.queue.map(\.id))
        let newIDs = Set(queue.map(\.id))
        guard oldIDs != newIDs else { return nil }
        if !oldIDs.isEmpty, oldIDs.isDisjoint(with: newIDs), !newIDs.isEmpty { return .replaced }
        let removed = old.queue.map(\.id).filter { !newIDs.contains($0) }
        let addedCount = newIDs.subtracting(oldIDs).count
        if removed.count + addedCount > Self.largestEditSignalledByEntry { return .replaced }
        let added = queue.enumerated().filter { !oldIDs.contains($0.element.id) }.map { index, entry in
            (entry, after: index > 0 ? queue[index - 1].id : nil)
        }
        return .edited(removed: removed, added: added)
    }
}

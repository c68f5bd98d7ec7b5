import FoundationEssentials

/// The answer to one request, or an event for a subscribed client: one JSON object on one line.
package struct ControlReply: Codable, Sendable {
    package var id: RequestID?
    /// True when the request was carried out. Events have no `ok`.
    package var ok: Bool?
    /// Why the request failed.
    package var error: String?
    /// `"state"` for an event pushed to a subscriber.
    package var event: String?
    package var state: PlayerSnapshot?
    package var queue: [EntryLine]?
    /// Ids given to added or inserted items.
    package var added: [Int]?

    /// A reply or event with the fields given (the others absent).
    package init(
        id: RequestID? = nil, ok: Bool? = nil, error: String? = nil, event: String? = nil, state: PlayerSnapshot? = nil,
        queue: [EntryLine]? = nil, added: [Int]? = nil
    ) {
        self.id = id
        self.ok = ok
        self.error = error
        self.event = event
        self.state = state
        self.queue = queue
        self.added = added
    }

    package static func failure(_ id: RequestID?, _ message: String) -> ControlReply {
        ControlReply(id: id, ok: false, error: message)
    }
}

/// Stopped, paused or playing: `QueuePlayer.PlaybackState` as the control protocol carries it, spelled on the wire
/// as MPRIS's `PlaybackStatus` and playerctl's `status` print it.
package enum PlaybackState: String, Codable, Sendable {
    case stopped = "Stopped"
    case paused = "Paused"
    case playing = "Playing"
}

/// What the player is doing, as `status`, `position`, `volume` and `metadata` report it.
package struct PlayerSnapshot: Codable, Sendable, Equatable {
    /// Stopped, paused or playing.
    package var status: PlaybackState
    /// Seconds into the current item.
    package var position: Double
    /// 0…1.
    package var volume: Double
    package var current: EntryDetails?
    /// Counts the jumps in time (seeks) so far: a change tells MPRIS to signal `Seeked`.
    package var jumps: Int = 0
    /// True when there is an item after the current one.
    package var hasNext: Bool = false
    /// Where the process stands: `active`, `inactive`, `background` or `suspended` (``ApplicationState``).
    package var application: String = "active"
    /// Why nothing is heard though playback is wanted: `output unavailable` (the audio server is away; the player
    /// reconnects by itself), `output suspended`, `buffering`, what a remote item's server is being asked again for
    /// ("reconnecting to HOST: connection refused, next try in 2 s"), or `no item to play`; absent otherwise.
    package var waiting: String?
    /// What plays again.
    package var loop: LoopStatus = .none
    /// MPD's single mode: on (or once) with ``loop`` `.track`; with ``loop`` `.none`, on when the player pauses after
    /// the current item.
    package var single: SingleMode = .off
    /// True while the queue plays shuffled.
    package var shuffle = false
    /// Which ReplayGain plays.
    package var replayGain: ReplayGain = .off

    /// A snapshot with the fields given.
    package init(
        status: PlaybackState, position: Double, volume: Double, current: EntryDetails?, jumps: Int = 0,
        hasNext: Bool = false, application: String = "active", waiting: String? = nil, loop: LoopStatus = .none,
        single: SingleMode = .off, shuffle: Bool = false, replayGain: ReplayGain = .off
    ) {
        self.status = status
        self.position = position
        self.volume = volume
        self.current = current
        self.jumps = jumps
        self.hasNext = hasNext
        self.application = application
        self.waiting = waiting
        self.loop = loop
        self.single = single
        self.shuffle = shuffle
        self.replayGain = replayGain
    }
}

/// The current item's metadata.
package struct EntryDetails: Codable, Sendable, Equatable {
    package var id: Int
    package var url: String
    package var title: String?
    package var artists: [String]
    package var album: String?
    /// Seconds; nil for a live stream, which has no length.
    package var length: Double?
    /// False for an item that cannot be sought in: a live stream, or a file from a server without byte ranges.
    package var isSeekable: Bool
    /// A podcast episode's publication day (`YYYY-MM-DD`), as its feed gives it.
    package var published: String?
    /// A station's name, as its server gives it (`icy-name`); its ``title`` is then the title being heard.
    package var stationName: String?

    /// Metadata with the fields given.
    package init(
        id: Int, url: String, title: String?, artists: [String], album: String?, length: Double?,
        isSeekable: Bool = true, published: String? = nil, stationName: String? = nil
    ) {
        self.id = id
        self.url = url
        self.title = title
        self.artists = artists
        self.album = album
        self.length = length
        self.isSeekable = isSeekable
        self.published = published
        self.stationName = stationName
    }
}

/// One line of `queue`.
package struct EntryLine: Codable, Sendable, Equatable {
    package var id: Int
    package var url: String
    package var current: Bool
    /// Seconds into the item where it starts when it plays (a podcast episode where it was left); absent from its
    /// start.
    package var startsAt: Double?
    /// The item's priority (see ``ControlCommand/priority(_:ids:)``); absent when it has none.
    package var priority: Int?
    /// Seconds into the item where the part it plays begins (see ``ControlCommand/range(item:start:end:)``); absent
    /// when it plays whole.
    package var rangeStart: Double?
    /// Seconds into the item where the part it plays ends; absent when it plays whole or to its end.
    package var rangeEnd: Double?

    /// A line with the fields given.
    package init(
        id: Int, url: String, current: Bool, startsAt: Double? = nil, priority: Int? = nil, rangeStart: Double? = nil,
        rangeEnd: Double? = nil
    ) {
        self.id = id
        self.url = url
        self.current = current
        self.startsAt = startsAt
        self.priority = priority
        self.rangeStart = rangeStart
        self.rangeEnd = rangeEnd
    }
}

import FoundationEssentials

/// The answer to one request, or an event for a subscribed client: one JSON object on one line.
struct ControlReply: Codable, Sendable {
    var id: RequestID?
    /// True when the request was carried out. Events have no `ok`.
    var ok: Bool?
    /// Why the request failed.
    var error: String?
    /// `"state"` for an event pushed to a subscriber.
    var event: String?
    var state: PlayerSnapshot?
    var queue: [QueueLine]?
    /// Ids given to added or inserted items.
    var added: [Int]?

    static func failure(_ id: RequestID?, _ message: String) -> ControlReply {
        ControlReply(id: id, ok: false, error: message)
    }
}

/// What the player is doing, as `status`, `position`, `volume` and `metadata` report it.
struct PlayerSnapshot: Codable, Sendable, Equatable {
    /// `Playing`, `Paused` or `Stopped`, as MPRIS and playerctl spell them.
    var status: String
    /// Seconds into the current item.
    var position: Double
    /// 0…1.
    var volume: Double
    var current: TrackInfo?
    /// Counts the jumps in time (seeks) so far: a change tells MPRIS to signal `Seeked`.
    var jumps: Int = 0
    /// True when there is an item after the current one.
    var hasNext: Bool = false
}

/// The current item's metadata.
struct TrackInfo: Codable, Sendable, Equatable {
    var id: Int
    var url: String
    var title: String?
    var artists: [String]
    var album: String?
    /// Seconds.
    var length: Double
}

/// One line of `queue`.
struct QueueLine: Codable, Sendable, Equatable {
    var id: Int
    var url: String
    var current: Bool
}

import QueuePlayerControl

/// What Snapcast shows of a player (`Plugin.Stream.Player.Properties`): its state, what it can do, and the current
/// item's metadata, as Snapcast's stream plugin interface names them. A plain value.
struct SnapcastProperties: Encodable, Equatable {
    /// The current item, in Snapcast's (MPRIS's) names.
    struct Metadata: Encodable, Equatable {
        var trackId: String
        var url: String
        var title: String?
        var artist: [String]?
        var album: String?
        /// Seconds.
        var duration: Double?
    }

    /// `playing`, `paused` or `stopped`.
    var playbackStatus: String
    /// What plays again: `none`, `track` or `playlist`.
    var loopStatus = "none"
    /// True while the queue plays shuffled.
    var shuffle = false
    /// 0 to 100.
    var volume: Int
    var rate = 1.0
    /// Seconds into the current item.
    var position: Double
    var canGoNext: Bool
    var canGoPrevious: Bool
    var canPlay: Bool
    var canPause: Bool
    var canSeek: Bool
    /// False while no daemon answers.
    var canControl: Bool
    var metadata: Metadata?
    /// The daemon's count of seeks (``PlayerSnapshot/jumps``), not sent: a change makes the properties news, however
    /// short the seek.
    var jumps = 0

    private enum CodingKeys: String, CodingKey {
        case playbackStatus, loopStatus, shuffle, volume, rate, position, canGoNext, canGoPrevious, canPlay, canPause
        case canSeek, canControl, metadata
    }

    /// The properties of a daemon in `state`, or of none (nil): stopped, and nothing can be done.
    init(_ state: PlayerSnapshot?) {
        guard let state else {
            playbackStatus = "stopped"
            volume = 0
            position = 0
            (canGoNext, canGoPrevious, canPlay, canPause, canSeek, canControl) = (
                false, false, false, false, false, false
            )
            return
        }
        switch state.status {
        case .playing: playbackStatus = "playing"
        case .paused: playbackStatus = "paused"
        case .stopped: playbackStatus = "stopped"
        }
        volume = Int((state.volume * 100).rounded())
        loopStatus = state.loop.rawValue.lowercased()
        shuffle = state.shuffle
        position = state.position
        canGoNext = state.hasNext
        canGoPrevious = state.current != nil
        canPlay = state.current != nil
        canPause = state.current != nil
        canSeek = state.current?.isSeekable ?? false
        canControl = true
        jumps = state.jumps
        metadata = state.current.map { current in
            Metadata(
                trackId: String(current.id), url: current.url, title: current.title,
                artist: current.artists.isEmpty ? nil : current.artists, album: current.album,
                duration: current.length)
        }
    }

    /// True when `self` says something `earlier` did not, other than a position that moved with time: a seek (the
    /// count of jumps changed) is news, and so, `elapsed` seconds after `earlier`, is a playing position off by more
    /// than half a second from where playing would have taken it (time that stood while the stream waited). Not
    /// playing, time does not move it: any change is news.
    func isNews(after earlier: SnapcastProperties?, elapsed: Double) -> Bool {
        guard let earlier else { return true }
        var moved = earlier
        moved.position = self.position
        guard moved == self else { return true }
        guard earlier.playbackStatus == "playing" else { return position != earlier.position }
        return abs(position - (earlier.position + elapsed)) > 0.5
    }
}

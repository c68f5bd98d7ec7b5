/// What a server's `Content-Type` says an item is, as far as playing it goes. Pure; any thread.
package enum ContentType: Equatable {
    /// MPEG audio, or a type that does not say (`audio/mpeg`, `application/octet-stream`): libmpg123 decides.
    case playable
    /// A playlist of M3U or PLS, to be expanded into its entries.
    case playlist
    /// HLS: the segments of an adaptive stream, which QueuePlayer does not play.
    case hls
    /// Audio in a format QueuePlayer does not play, by its name ("AAC", "Ogg", "Opus", "FLAC").
    case otherAudio(String)
    /// XML (RSS, Atom, or plain XML): perhaps a podcast feed, whose episodes are queued instead of it.
    case feed
    /// What a web server sends for an error page or an API's answer: never audio.
    case text

    /// The kind of the MIME type `type` (parameters such as `; charset=` ignored, any case).
    package init(_ type: String) {
        let type = type.lowercased()
        let essence = type.split(separator: ";").first.map(String.init) ?? type
        if essence.contains("vnd.apple.mpegurl") {
            self = .hls
        } else if essence.contains("mpegurl") || essence.contains("scpls") || essence.contains("pls+xml") {
            self = .playlist
        } else if let name = Self.otherAudioNames.first(where: { essence.contains($0.key) })?.value {
            self = .otherAudio(name)
        } else if essence.contains("xml") || essence.contains("rss") || essence.contains("atom") {
            self = .feed
        } else if essence.hasPrefix("text/") || essence.contains("json") || essence.contains("html") {
            self = .text
        } else {
            self = .playable
        }
    }

    private static let otherAudioNames: KeyValuePairs<String, String> = [
        "aac": "AAC", "mp4": "AAC", "m4a": "AAC", "opus": "Opus", "ogg": "Ogg", "flac": "FLAC", "wav": "WAV",
        "webm": "WebM",
    ]

    /// Why an item of this kind cannot be played and what to do instead, for a ``DecoderError``; nil for a playable
    /// or a playlist kind. `type` is the type as the server sent it.
    package func refusal(of type: String) -> (reason: String, suggestion: String)? {
        switch self {
        case .playable, .playlist:
            return nil
        case .hls:
            return (
                "is an HLS stream (\(type)), which QueuePlayer does not play",
                "Give the station's direct MP3 stream (Icecast or SHOUTcast) instead"
            )
        case .otherAudio(let name):
            return (
                "is \(name) audio (\(type)); QueuePlayer plays MP3 only",
                "Choose the station's MP3 stream: most stations offer one beside their \(name) stream"
            )
        case .feed:
            return (
                "not an MP3 stream but a document (\(type)), perhaps a podcast feed",
                "Add a feed's URL with playerctl add: it queues the feed's episodes"
            )
        case .text:
            return (
                "not an MP3 stream: the server sent \(type)",
                "Check the URL: it should lead to the audio itself, not to a web page"
            )
        }
    }
}

import FoundationEssentials

/// A podcast feed, RSS 2.0 or Atom: its show's name and its MP3 episodes, newest first. Read by ``FeedReader``.
/// A value type; pure functions, for any thread.
package struct Feed: Equatable, Sendable {
    /// One episode: its MP3 enclosure, and what the feed says of it.
    package struct Episode: Equatable, Sendable {
        package var url: URL
        package var title: String?
        /// When it was published (RSS `pubDate`, Atom `published` or `updated`), if the feed says so readably.
        package var published: Date?
        /// How long it is, in seconds (`itunes:duration`), if the feed says so readably.
        package var duration: Double?

        package init(url: URL, title: String? = nil, published: Date? = nil, duration: Double? = nil) {
            self.url = url
            self.title = title
            self.published = published
            self.duration = duration
        }
    }

    /// Why a document gave no episodes to queue: it names the feed and says what to do.
    package struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// The feed's URL.
        package let location: String
        /// What is wrong, and what to do about it.
        package let reason: String

        package var description: String { "\(location): \(reason)" }
    }

    /// The show's name (the channel's or feed's own title).
    package var show: String?
    /// The MP3 episodes, newest first: by date when every one has a date, else in the feed's order (which feeds
    /// keep newest first).
    package var episodes: [Episode]

    /// The show `show` with `episodes` in the feed's order, kept if MP3 (`audio/mpeg`, or a path ending in `.mp3`
    /// when the type is missing) and put newest first. Throws, naming `location`, when none is MP3.
    package init(
        show: String?, enclosures: [(episode: Episode, type: String?)], location: String
    ) throws(Failure) {
        let mp3 = enclosures.filter { enclosure in
            guard let type = enclosure.type?.lowercased(), !type.isEmpty else {
                return enclosure.episode.url.pathExtension.lowercased() == "mp3"
            }
            return type == "audio/mpeg" || type == "audio/mp3"
        }.map(\.episode)
        guard !mp3.isEmpty else {
            let types = Set(enclosures.compactMap(\.type)).sorted().joined(separator: ", ")
            throw Failure(
                location: location,
                reason: enclosures.isEmpty
                    ? "a feed with no episodes to play (no enclosures)"
                    : "a feed with no MP3 episodes (its enclosures are \(types)); QueuePlayer plays MP3 only")
        }
        self.show = show
        let dated = mp3.enumerated().compactMap { order, episode in
            episode.published.map { (episode: episode, published: $0, order: order) }
        }
        episodes =
            dated.count == mp3.count
            ? dated.sorted { ($0.published, -$0.order) > ($1.published, -$1.order) }.map(\.episode) : mp3
    }
}

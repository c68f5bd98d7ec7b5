import FoundationEssentials

/// What a podcast feed says of one episode: its title, its show's name, when it was published and how long it is.
/// Kept by the episode's URL in the state store, so that the queue and `metadata` show it after a restart, and after
/// the episode is queued again by its URL alone. A value type; any thread.
package struct EpisodeDetails: Equatable, Sendable {
    package var title: String?
    package var show: String?
    package var published: Date?
    /// Seconds; shown as the episode's length until it is opened and its own is known.
    package var duration: Double?

    package init(title: String? = nil, show: String? = nil, published: Date? = nil, duration: Double? = nil) {
        self.title = title
        self.show = show
        self.published = published
        self.duration = duration
    }

    /// The publication day, as `YYYY-MM-DD` in UTC (what MPRIS's `xesam:contentCreated` carries).
    package var publishedDay: String? {
        published.map { $0.formatted(.iso8601.year().month().day()) }
    }
}

extension Feed {
    /// The details of each episode, by its URL.
    package var details: [URL: EpisodeDetails] {
        Dictionary(
            episodes.map { episode in
                let details = EpisodeDetails(
                    title: episode.title, show: show, published: episode.published, duration: episode.duration)
                return (episode.url, details)
            },
            uniquingKeysWith: { first, _ in first })
    }
}

import FoundationEssentials
import GRDB

/// Where each podcast episode (a finite remote item) was left, and what its feed says of it, by its URL: kept after
/// it leaves the queue, so that adding or opening it again resumes there, named as its feed names it.
extension StateStore {
    /// Where an episode was left.
    package struct EpisodePosition: Equatable, Sendable {
        /// Seconds into the episode.
        package var seconds: Double
        /// Heard to its end, or to within its last minute: played, and started from the beginning next time.
        package var isPlayed: Bool

        package init(seconds: Double, isPlayed: Bool) {
            self.seconds = seconds
            self.isPlayed = isPlayed
        }
    }

    /// What the store holds of one episode.
    package struct SavedEpisode: Equatable, Sendable {
        /// Where it was left; seconds 0, not played, for an episode only listed by a feed.
        package var position: EpisodePosition
        package var details: EpisodeDetails
    }

    /// What the store holds of the episode at `url`, or nil when it never played and no feed listed it.
    package func episode(at url: String) throws -> SavedEpisode? {
        try database.read { database in
            try Row.fetchOne(
                database, sql: "SELECT seconds, isPlayed, title, show, published, duration FROM episode WHERE url = ?",
                arguments: [url]
            ).map { row in
                let published = (row["published"] as Double?).map { Date(timeIntervalSince1970: $0) }
                return SavedEpisode(
                    position: EpisodePosition(seconds: row["seconds"], isPlayed: row["isPlayed"]),
                    details: EpisodeDetails(
                        title: row["title"], show: row["show"], published: published, duration: row["duration"]))
            }
        }
    }

    /// The URLs of the episodes played (to their end, or to within their last minute).
    package func playedEpisodes() throws -> Set<String> {
        try database.read { database in
            Set(try String.fetchAll(database, sql: "SELECT url FROM episode WHERE isPlayed"))
        }
    }

    /// Records where the episode at `url` is.
    package func saveEpisodePosition(_ position: EpisodePosition, of url: String) throws {
        // One statement, kept compiled: it runs with the position's checkpoint, every second an episode plays.
        try database.writeWithoutTransaction { database in
            try database.cachedStatement(
                sql: "INSERT INTO episode (url, seconds, isPlayed) VALUES (?, ?, ?) "
                    + "ON CONFLICT(url) DO UPDATE SET seconds = excluded.seconds, isPlayed = excluded.isPlayed"
            ).execute(arguments: [url, position.seconds, position.isPlayed])
        }
    }

    /// Records what a feed says of each episode in `details` (by URL), in one transaction, keeping where each was
    /// left.
    package func saveEpisodeDetails(_ details: [String: EpisodeDetails]) throws {
        guard !details.isEmpty else { return }
        try database.write { database in
            let statement = try database.cachedStatement(
                sql: "INSERT INTO episode (url, seconds, isPlayed, title, show, published, duration) "
                    + "VALUES (?, 0, 0, ?, ?, ?, ?) ON CONFLICT(url) DO UPDATE SET title = excluded.title, "
                    + "show = excluded.show, published = excluded.published, duration = excluded.duration")
            for (url, episode) in details {
                try statement.execute(arguments: [
                    url, episode.title, episode.show, episode.published?.timeIntervalSince1970, episode.duration,
                ])
            }
        }
    }
}

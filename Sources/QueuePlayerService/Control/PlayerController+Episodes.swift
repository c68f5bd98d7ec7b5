import FoundationEssentials
import QueuePlayer

/// Podcast episodes: where each was left is kept by its URL (the state store's `episode` table), and an episode
/// queued again (`add`, `insert`, `open`, the daemon's arguments), days later or in another queue, starts there.
extension PlayerController {
    /// How far before where it was left an episode starts again, as podcast apps do: the listener hears again the
    /// end of what was being said.
    static let episodeRewindSeconds = 5.0
    /// An episode left within this long of its end (or within the last tenth of a shorter one) counts as played,
    /// and starts from the beginning next time.
    static let playedWithinSeconds = 60.0

    /// What the store's `episode` row of one episode holds.
    struct EpisodeCheckpoint: Equatable {
        var url: String
        var position: StateStore.EpisodePosition
    }

    /// New items for what `expansion` names: an episode that was left part-way starts there,
    /// ``episodeRewindSeconds`` back. What feeds said of its episodes is saved, to be shown while they are queued.
    package func items(for expansion: ItemPaths.Expansion) -> [PlayerItem] {
        let details = Dictionary(uniqueKeysWithValues: expansion.details.map { ($0.key.itemLocation, $0.value) })
        do {
            try store.saveEpisodeDetails(details)
        } catch {
            logger.error("cannot save what the feeds say of their episodes in \(store.location): \(error)")
        }
        forgetDetailsOfUnqueuedEpisodes()
        return expansion.files.map { url in
            let item = PlayerItem(url: url)
            recallEpisode(item)
            return item
        }
    }

    /// For an episode `item`: what its feed said of it, kept to be shown, and (when it `resumes`) where it starts:
    /// where it was left, unless played.
    func recallEpisode(_ item: PlayerItem, resumes: Bool = true) {
        guard URL.isRemoteItemLocation(item.location), let saved = try? store.episode(at: item.location) else { return }
        if saved.details != EpisodeDetails() {
            state.withLock { $0.episodeDetails[item.location] = saved.details }
        }
        guard resumes, !saved.position.isPlayed, saved.position.seconds > 0 else { return }
        let start = max(0, saved.position.seconds - Self.episodeRewindSeconds)
        item.startTime = MediaTime(seconds: start, preferredTimescale: 1000)
    }

    /// Drops the shown details of episodes no longer queued, so that a daemon that queues feeds for months keeps
    /// only those of its queue.
    private func forgetDetailsOfUnqueuedEpisodes() {
        let queued = Set(player.entries().map(\.location))
        state.withLock { $0.episodeDetails = $0.episodeDetails.filter { queued.contains($0.key) } }
    }

    /// Records where the current episode is, at `time`: a remote item that is open and has an end.
    func checkpointEpisode(at time: MediaTime) {
        guard let item = player.currentItem, URL.isRemoteItemLocation(item.location), item.status == .readyToPlay,
            !item.isLive, item.duration.isNumeric, time.isNumeric
        else { return }
        let length = item.duration.seconds
        let isPlayed = length - time.seconds <= min(Self.playedWithinSeconds, length / 10)
        saveEpisode(EpisodeCheckpoint(url: item.location, position: .init(seconds: time.seconds, isPlayed: isPlayed)))
    }

    /// An episode heard to its end is played.
    func episodeFinished(_ entry: QueueEntry) {
        guard URL.isRemoteItemLocation(entry.location) else { return }
        saveEpisode(EpisodeCheckpoint(url: entry.location, position: .init(seconds: 0, isPlayed: true)))
    }

    private func saveEpisode(_ checkpoint: EpisodeCheckpoint) {
        save(checkpoint, as: \.savedEpisode, what: "where \(checkpoint.url) was left") { checkpoint in
            try store.saveEpisodePosition(checkpoint.position, of: checkpoint.url)
        }
    }
}

import FoundationEssentials
import Glibc
import Logging
import PosixThreads
import QueuePlayerControl
import QueuePlayer
import Synchronization

/// The music folder's index: every MP3 file in it (followed into subfolders) with its length and tags, kept in the
/// state store and in memory, brought up to date by update jobs as MPD's `update` and `rescan` ask: one at a time,
/// in the order asked, on a thread of their own at a lower priority than the player's.
///
/// An update reads again only the files whose time of change differs from the one indexed (a rescan reads every
/// one), drops those gone, and skips a file that is not a playable MP3 with a warning naming it. The first index of a
/// folder is made when the daemon starts (``updateIfNeverIndexed()``), as MPD makes its database.
///
/// Threading: any thread. Reads see the index as the last update left it.
package final class MusicIndex: Sendable {
    /// What an update job did, told as it happens.
    package enum Event: Equatable, Sendable {
        /// Job `id` started.
        case started(id: Int)
        /// Job `id` ended; `changed` when it added, read again or removed a song.
        case finished(id: Int, changed: Bool)
    }

    /// Why an update was not queued.
    package enum UpdateRefusal: Error, Equatable {
        /// ``maximumQueuedJobs`` wait already.
        case queueFull
    }

    /// The most update jobs that wait at once (MPD's).
    package static let maximumQueuedJobs = 32

    /// The folder indexed.
    package let folder: MPDMusicFolder
    private let store: StateStore
    private let logger: Logger
    private let tell: @Sendable (Event) -> Void
    private let contents = Mutex(MusicIndexContents(songs: [], updated: nil))
    private let jobs = Mutex(Jobs())

    private struct Jobs {
        var waiting: [Job] = []
        var running: Job?
        var lastID = 0
        /// A thread carries out the jobs waiting; it ends when none is left.
        var hasWorker = false
    }

    private struct Job {
        var id: Int
        /// The folder or file to update, relative to the music folder; empty for all of it.
        var path: String
        var rereadsAll: Bool
    }

    /// The index of `folder` as `store` holds it (empty when it holds one of another folder), telling `tell` of each
    /// job.
    package init(
        folder: MPDMusicFolder, store: StateStore, logger: Logger, tell: @escaping @Sendable (Event) -> Void
    ) {
        self.folder = folder
        self.store = store
        self.logger = logger
        self.tell = tell
        var saved: StateStore.SavedMusicIndex?
        do {
            saved = try store.musicIndex()
        } catch {
            logger.error("cannot read the music index from the state store \(store.location): \(error); rebuilding it")
        }
        if let saved, saved.folder == folder.path {
            contents.withLock { $0 = MusicIndexContents(songs: saved.songs, updated: saved.updated) }
        }
    }

    /// The index as the last update left it.
    package var current: MusicIndexContents { contents.withLock { $0 } }

    /// The job running, if any (MPD's `updating_db`).
    package var runningJob: Int? { jobs.withLock { $0.running?.id } }

    /// Starts an update of the whole folder when it was never indexed.
    package func updateIfNeverIndexed() {
        guard current.updated == nil else { return }
        _ = try? update("", rereadingAll: false)
    }

    /// Queues an update of `path` (a folder or file relative to the music folder; empty for all of it), reading
    /// every file again when `rereadingAll` (MPD's `rescan`); returns its job's id.
    package func update(_ path: String, rereadingAll: Bool) throws(UpdateRefusal) -> Int {
        let (id, starts) = try jobs.withLock { jobs throws(UpdateRefusal) in
            guard jobs.waiting.count < Self.maximumQueuedJobs else { throw .queueFull }
            jobs.lastID += 1
            jobs.waiting.append(Job(id: jobs.lastID, path: path, rereadsAll: rereadingAll))
            defer { jobs.hasWorker = true }
            return (jobs.lastID, !jobs.hasWorker)
        }
        if starts { PosixThread.start(name: "music index") { [self] in runJobs() } }
        return id
    }

    private func runJobs() {
        // Below the player's threads (nice 10): indexing thousands of files must not take a core from the audio.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(PosixThread.currentThreadID()), 10)
        while let job = jobs.withLock({ jobs -> Job? in
            jobs.running = jobs.waiting.isEmpty ? nil : jobs.waiting.removeFirst()
            if jobs.running == nil { jobs.hasWorker = false }
            return jobs.running
        }) {
            tell(.started(id: job.id))
            let changed = run(job)
            jobs.withLock { $0.running = nil }
            tell(.finished(id: job.id, changed: changed))
        }
    }

    /// Carries out `job`; true when the index changed.
    private func run(_ job: Job) -> Bool {
        let started = ContinuousClock.now
        let before = current
        let found = MusicFolderWalk(root: folder.path, logger: logger).files(under: job.path)
        let indexed = before.songs.values.filter { Self.path($0.path, isUnder: job.path) }
        let known = Dictionary(indexed.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var changed: [IndexedSong] = []
        var kept: Set<String> = []
        for (path, modified) in found {
            if !job.rereadsAll, let song = known[path], song.modified == modified {
                kept.insert(path)
                continue
            }
            do throws(DecoderError) {
                let description = try PlayerItem.describe(URL(fileURLWithPath: "\(folder.path)/\(path)"))
                changed.append(IndexedSong(path: path, modified: modified, description: description))
                kept.insert(path)
            } catch {
                logger.warning("music index: skipping \(error)")
            }
        }
        let removed = indexed.map(\.path).filter { !kept.contains($0) }
        let updated = Date()
        do {
            try store.saveMusicIndex(folder: folder.path, updated: updated, changed: changed, removed: removed)
        } catch {
            logger.error("cannot save the music index in the state store \(store.location): \(error)")
        }
        contents.withLock { $0 = $0.replacing(changed, removing: Set(removed), updated: updated) }
        let elapsed = (ContinuousClock.now - started).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        logger.info(
            """
            music index of \(folder.path)\(job.path.isEmpty ? "" : "/\(job.path)"): \(kept.count) songs, \
            \(changed.count) read, \(removed.count) removed, in \(fixedDecimals(seconds, places: 2)) s
            """)
        return !changed.isEmpty || !removed.isEmpty
    }

    /// True when `path` is `folder` or inside it (everything is inside the empty folder).
    static func path(_ path: String, isUnder folder: String) -> Bool {
        folder.isEmpty || path == folder || path.hasPrefix(folder + "/")
    }
}

import Dispatch
import Glibc
import Logging
import PosixThreads
import Synchronization

/// Follows a music folder's changes with inotify, as MPD's `auto_update` does: a file written, moved in or out or
/// removed, and a folder made, moved or removed, anywhere below it (hidden names aside, as the index leaves them out).
/// Once nothing more has changed for `delay` (copying an album takes a while; MPD waits 5 s), it hands the folders
/// that changed to `changed`, each relative to the music folder ("" for all of it). Folders made later are followed
/// as they appear. When the system allows no more watches (`fs.inotify.max_user_watches`), it says so once, naming
/// the setting; the folders left out then wait for an `update`.
///
/// A thread of its own waits in `poll(2)` on inotify and on a pipe that ``stop()`` writes to, with no timeout but
/// the `delay` after a change: while nothing changes it never wakes.
///
/// Why the raw pointers are safe: events are read into one buffer of bytes; each event's header is loaded from within
/// the bytes `read(2)` returned, and its name from within the `len` bytes the kernel counts after it, inside them too.
///
/// Threading: any thread; `changed` is called on the watch's thread.
package final class MusicFolderWatch: Sendable {
    private let inotify: Int32
    /// The pipe ``stop()`` writes a byte to: its reading end, then its writing end.
    private let stopPipe: (read: Int32, write: Int32)
    private let root: String
    private let delay: Duration
    private let logger: Logger
    private let changed: @Sendable ([String]) -> Void
    private let phase = Mutex(Phase.created)
    private let ended = DispatchSemaphore(value: 0)

    private enum Phase { case created, running, stopped }

    /// A watch of `root`, nothing followed before ``start()``; nil, logged, when inotify cannot be had.
    package init?(
        root: String, delay: Duration = .seconds(5), logger: Logger, changed: @escaping @Sendable ([String]) -> Void
    ) {
        inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        var ends: [Int32] = [-1, -1]
        let piped = pipe(&ends) == 0
        stopPipe = (ends[0], ends[1])
        guard inotify >= 0, piped else {
            logger.error(
                "cannot follow the music folder \(root) (inotify: \(String(cString: strerror(errno)))); run update")
            for descriptor in [inotify] + ends where descriptor >= 0 { close(descriptor) }
            return nil
        }
        for descriptor in ends { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        self.root = root
        self.delay = delay
        self.logger = logger
        self.changed = changed
    }

    deinit {
        stop()
        for descriptor in [inotify, stopPipe.read, stopPipe.write] { close(descriptor) }
    }

    /// Follows the music folder and every folder under it from now on: each folder is followed when it returns.
    /// Once only.
    package func start() {
        let starts = phase.withLock { phase in
            defer { if phase == .created { phase = .running } }
            return phase == .created
        }
        guard starts else { return }
        var followed = Followed(root: root, inotify: inotify, logger: logger)
        followed.follow("")
        PosixThread.start(name: "music watch") { [self, followed] in
            run(followed)
            ended.signal()
        }
    }

    /// Stops following: nothing is handed on after it returns.
    package func stop() {
        let wasRunning = phase.withLock { phase in
            defer { phase = .stopped }
            return phase == .running
        }
        guard wasRunning else { return }
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
        ended.wait()
    }

    /// The watch's thread: follows the folders, and hands on what changed once `delay` passed without a change.
    private func run(_ followed: Followed) {
        var followed = followed
        var due: ContinuousClock.Instant?
        while true {
            var waits = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)]
            waits.append(pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0))
            let timeout = due.map { Self.milliseconds(until: $0) } ?? -1
            let ready = poll(&waits, nfds_t(waits.count), timeout)
            if ready < 0, errno == EINTR { continue }
            if ready < 0 || waits[1].revents != 0 { return }
            if waits[0].revents != 0, readEvents(into: &followed) { due = .now + delay }
            if let deadline = due, ContinuousClock.now >= deadline {
                due = nil
                let folders = followed.takeChanged()
                if !folders.isEmpty { changed(folders) }
            }
        }
    }

    /// Reads every event waiting into `followed`; true when one of them changed something.
    private func readEvents(into followed: inout Followed) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var noted = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { return noted }
            buffer.withUnsafeBytes { bytes in
                var offset = 0
                let header = MemoryLayout<inotify_event>.size
                while offset + header <= count {
                    let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let nameBytes = bytes[(offset + header)..<min(count, offset + header + Int(event.len))]
                    let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                    if followed.note(watch: event.wd, mask: event.mask, name: name) { noted = true }
                    offset += header + Int(event.len)
                }
            }
        }
    }

    private static func milliseconds(until instant: ContinuousClock.Instant) -> Int32 {
        let left = ContinuousClock.now.duration(to: instant)
        let milliseconds = left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(0, milliseconds + 1))
    }
}

/// The folders a watch follows, and those changed since they were last handed on. The watch's thread only.
private struct Followed {
    let root: String
    let inotify: Int32
    let logger: Logger
    /// The folder each watch follows, relative to the root.
    private var folders: [Int32: String] = [:]
    private var changed: Set<String> = []
    private var toldWatchLimit = false

    init(root: String, inotify: Int32, logger: Logger) {
        self.root = root
        self.inotify = inotify
        self.logger = logger
    }

    /// Adds a watch for `folder` and each folder under it.
    mutating func follow(_ folder: String) {
        for path in MusicFolderWalk(root: root, logger: logger).folders(under: folder) {
            let watch = inotify_add_watch(inotify, path.isEmpty ? root : "\(root)/\(path)", MusicFolderWatchEvents.all)
            if watch >= 0 {
                folders[watch] = path
            } else if errno == ENOSPC, !toldWatchLimit {
                toldWatchLimit = true
                logger.warning(
                    """
                    cannot follow more folders of \(root) than fs.inotify.max_user_watches allows: raise it (sysctl), \
                    or run update after changes there
                    """)
            }
        }
    }

    /// Notes one event: the folder it happened in has changed, and a folder made or moved in is followed. True when
    /// something changed.
    mutating func note(watch: Int32, mask: UInt32, name: String) -> Bool {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            changed.insert("")
            return true
        }
        guard let folder = folders[watch] else { return false }
        if mask & UInt32(IN_IGNORED) != 0 {
            folders.removeValue(forKey: watch)
            return false
        }
        guard !name.hasPrefix(".") else { return false }
        if mask & UInt32(IN_ISDIR) != 0, mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
            follow(folder.isEmpty ? name : "\(folder)/\(name)")
        }
        changed.insert(folder)
        return true
    }

    /// The folders changed, each once and none inside another, and forgets them.
    mutating func takeChanged() -> [String] {
        let folders = changed.sorted()
        changed = []
        return folders.filter { folder in !folders.contains { $0 != folder && MusicIndex.path(folder, isUnder: $0) } }
    }
}

/// What a watch asks inotify to be told of.
private enum MusicFolderWatchEvents {
    static let all = UInt32(
        IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF)
}

import QueuePlayerService
import TestSupport
import Testing

/// One MPD client of a daemon core in-process: its commands carried out by a runner of its own, as a TCP client's
/// are, with the fixtures' folder as the music folder.
struct MPDTestClient {
    let runner: MPDCommandRunner
    private let service: ServiceHarness

    /// A client of `service` telling changes that are not the player's to `feed`, with `mailbox` for its messages
    /// (by default one no other client shares).
    init(of service: ServiceHarness, feed: MPDChangeFeed = MPDChangeFeed(), mailbox: MPDMessages.Mailbox? = nil) {
        self.service = service
        runner = MPDCommandRunner(
            controller: service.controller,
            musicFolder: MPDMusicFolder(path: Fixtures.mp3("stereo-44k-5s").deletingLastPathComponent().path),
            playlists: MPDStoredPlaylists(folder: Subprocess.temporaryFile("playlists").path),
            versions: MPDQueueVersions(), feed: feed, mailbox: mailbox, isLocalClient: false)
    }

    /// The answers to `lines`, sent one after the other outside a command list, up to the first error.
    func run(_ lines: String...) -> String { runner.run(lines: lines, listOK: false).text }

    /// Queues `uri` with `addid` and returns the id it answers with.
    func addID(_ uri: String) throws -> Int {
        let answer = run("addid \(uri)")
        return try #require(Int(answer.dropFirst("Id: ".count).prefix { $0.isNumber }), "\(answer)")
    }

    /// The queue's version `status` gives (its `playlist` line): a change of the queue is a new one.
    func queueVersion() -> Substring? {
        run("status").split(separator: "\n").first { $0.hasPrefix("playlist: ") }
    }

    /// Queues `count` songs (the join fixtures in turn) and returns the queue's ids.
    func queue(_ count: Int) -> [Int] {
        let names = ["join-1.mp3", "join-2.mp3", "join-3.mp3"]
        for index in 0..<count { _ = run("add \(names[index % names.count])") }
        return service.controller.queue().map(\.id)
    }
}

import Foundation
import NIOCore
import NIOEmbedded
import QueuePlayerControl
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayerService

/// MPD's `connection_timeout` on a manual clock (NIO's testing event loop): a client that says nothing is
/// disconnected after the timeout, counted from its last line; one that idles is kept however long it waits.
@Suite("MPD's connection timeout", .tier(.deterministic), .timeLimit(.minutes(1)))
struct MPDConnectionTimeoutTests {
    private let service: ServiceHarness
    private let channel = NIOAsyncTestingChannel()

    init() async throws {
        let service = try ServiceHarness()
        self.service = service
        let folder = MPDMusicFolder(path: Fixtures.mp3("stereo-44k-5s").deletingLastPathComponent().path)
        let feed = MPDChangeFeed()
        let runner = MPDCommandRunner(
            controller: service.controller, musicFolder: folder,
            playlists: MPDStoredPlaylists(folder: Scratch.uniquePath("playlists")), versions: MPDQueueVersions(),
            feed: feed, isLocalClient: false)
        try await channel.testingEventLoop.executeInContext { [channel] in
            try channel.pipeline.syncOperations.addHandlers(
                ByteToMessageHandler(ControlLineDecoder(maximumLength: MPDServer.maximumLineLength)),
                MPDConnectionHandler(runner: runner, feed: feed, timeout: .seconds(60)))
        }
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 6600))
        #expect(try await answer() == MPDConnectionHandler.greeting)
    }

    @Test("a client that says nothing for 60 s is disconnected, counted from its last line")
    func silentClient() async throws {
        await channel.testingEventLoop.advanceTime(by: .seconds(59))
        #expect(channel.isActive)
        try await send("ping")
        #expect(try await answer() == "OK\n")
        await channel.testingEventLoop.advanceTime(by: .seconds(59))
        #expect(channel.isActive, "the ping counts the timeout again")
        await channel.testingEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive, "60 s after the ping")
    }

    @Test("an idling client is kept for hours; after noidle the timeout counts again")
    func idlingClient() async throws {
        try await send("idle")
        await channel.testingEventLoop.advanceTime(by: .seconds(3 * 3600))
        #expect(channel.isActive)
        try await send("noidle")
        #expect(try await answer() == "OK\n")
        await channel.testingEventLoop.advanceTime(by: .seconds(60))
        #expect(!channel.isActive)
    }

    private func send(_ line: String) async throws {
        try await channel.writeInbound(ByteBuffer(string: line + "\n"))
    }

    private func answer() async throws -> String? {
        try await channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) }
    }
}

import FoundationEssentials
import Glibc
import Logging
import NIOCore
import NIOPosix
import QueuePlayerControl
import ServiceLifecycle
import Synchronization

/// Serves MPD's protocol (see docs/mpd.md) on TCP addresses and Unix sockets, through the same
/// ``PlayerController`` as the control socket and MPRIS: a change made by any front end is seen by all, and an MPD
/// client's `idle` hears of it.
///
/// An address that cannot be bound (the port taken by a running mpd, say) is logged once, and the daemon carries on
/// without it. A Unix socket is the user's alone (mode 0600, other users' connections refused), and its clients may
/// name files outside the music folder, as MPD allows a local client.
package final class MPDServer: Service {
    /// The most connections served at once by default (MPD's `max_connections` default).
    package static let defaultMaximumConnections = 100
    /// How long a client that is not idling may say nothing before it is disconnected, by default (MPD's
    /// `connection_timeout` default).
    package static let defaultConnectionTimeout = Duration.seconds(60)
    /// The line length MPD's input buffer holds.
    package static let maximumLineLength = 8 * 1024 - 1
    /// The answers a client may leave unread before it is dropped (MPD's `max_output_buffer_size` default).
    package static let maximumOutputBytes = 8 * 1024 * 1024

    private let addresses: [MPDListenAddress]
    private let controller: PlayerController
    private let musicFolder: MPDMusicFolder
    private let playlists: MPDStoredPlaylists
    private let access: MPDAccess
    /// The most connections served at once; more are closed at once.
    private let maximumConnections: Int
    private let connectionTimeout: Duration
    private let logger: Logger
    private let feed = MPDChangeFeed()
    /// The channels clients subscribe to, and their messages.
    private let messages: MPDMessages
    private let versions = MPDQueueVersions()
    private let playTime = MPDPlayTime()
    /// The music folder's index, kept in the controller's state store.
    private let index: MusicIndex
    /// Updates the index as the music folder changes; nil unless asked for.
    private let watch: MusicFolderWatch?
    private let connections = Atomic(0)
    private let bound = Mutex<Bound?>(nil)

    /// What ``bind()`` set up.
    private struct Bound: Sendable {
        var channels: [(any Channel, MPDListenAddress)]
        /// The observers of the controller's changes (the feed's, the play time's).
        var following: [Int]
    }

    /// A server for `addresses`, naming songs relative to `musicFolder`, with `playlists` stored, its clients
    /// allowed what `access` says, each disconnected after `connectionTimeout` of silence while not idling. With
    /// `followsMusicFolder`, the index is updated by itself as the folder changes, `settling` after the last change
    /// (mpd's `auto_update`). Nothing is bound before ``bind()``.
    package init(
        addresses: [MPDListenAddress], controller: PlayerController, musicFolder: MPDMusicFolder,
        playlists: MPDStoredPlaylists, access: MPDAccess, maximumConnections: Int = defaultMaximumConnections,
        connectionTimeout: Duration = defaultConnectionTimeout, followsMusicFolder: Bool = false,
        settling: Duration = .seconds(5), logger: Logger
    ) {
        self.access = access
        self.maximumConnections = maximumConnections
        self.connectionTimeout = connectionTimeout
        self.addresses = addresses
        self.controller = controller
        self.musicFolder = musicFolder
        self.playlists = playlists
        self.logger = logger
        messages = MPDMessages(feed: feed)
        index = MusicIndex(folder: musicFolder, store: controller.store, logger: logger) { [feed] event in
            switch event {
            case .started: feed.tell([.update])
            case .finished(_, let changed): feed.tell(changed ? [.update, .database] : [.update])
            }
        }
        watch =
            followsMusicFolder
            ? MusicFolderWatch(root: musicFolder.path, delay: settling, logger: logger) { [index, logger] folders in
                for folder in folders {
                    do throws(MusicIndex.UpdateRefusal) {
                        _ = try index.update(folder, rereadingAll: false)
                    } catch {
                        logger.warning("music index: too many updates waiting; \(folder) changed and is not updated")
                    }
                }
            } : nil
    }

    /// Binds every address it can, logging each that cannot be bound, and starts telling idling clients of changes.
    /// The daemon calls it before it serves its control socket, so that a client that sees the daemon there finds
    /// the MPD addresses bound too. Only the first call binds; ``run()`` calls it if nobody did.
    package func bind() async {
        guard bound.withLock({ $0 == nil }) else { return }
        var channels: [(any Channel, MPDListenAddress)] = []
        for address in addresses {
            do {
                channels.append((try await bind(address), address))
                logger.info("MPD protocol on \(address)")
                if !address.isLoopback, access.passwords.isEmpty {
                    logger.warning(
                        """
                        MPD protocol on \(address) without a password: anyone who reaches it controls the player; \
                        give --mpd-password PASSWORD@read,add,control and --mpd-default-permissions read
                        """)
                }
            } catch {
                logger.error(
                    "cannot serve the MPD protocol on \(address): \(error); carrying on without it (is mpd running?)")
            }
        }
        let following = [
            feed.follow(controller),
            controller.observeChanges { [playTime] snapshot, _ in playTime.note(snapshot.status) },
        ]
        bound.withLock { $0 = Bound(channels: channels, following: following) }
        index.updateIfNeverIndexed()
        watch?.start()
    }

    /// Serves the addresses bound until graceful shutdown, then closes them (and removes the socket files it made).
    package func run() async throws {
        await bind()
        try? await gracefulShutdown()
        watch?.stop()
        guard let bound = bound.withLock({ $0 }) else { return }
        bound.following.forEach(controller.removeChangeObserver)
        for (channel, address) in bound.channels {
            try? await channel.close()
            if case .unix(let path) = address { try? FileManager.default.removeItem(atPath: path) }
        }
    }

    private func bind(_ address: MPDListenAddress) async throws -> any Channel {
        let bootstrap = ServerBootstrap(group: ControlEventLoop.group)
            .serverChannelOption(.backlog, value: 128)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(
                .writeBufferWaterMark, value: .init(low: Self.maximumOutputBytes / 2, high: Self.maximumOutputBytes)
            )
            .childChannelInitializer { [self] channel in accept(channel, isLocal: address.isUnixSocket) }
        switch address {
        case .tcp(let host, let port):
            return try await bootstrap.bind(host: host, port: port).get()
        case .unix(let path):
            try ControlSocketPath.prepareFolder(for: path)
            if FileManager.default.fileExists(atPath: path) {
                guard await ControlServer.runningDaemon(at: path) == nil else {
                    throw ControlError("another server answers at \(path)")
                }
                try FileManager.default.removeItem(atPath: path)
            }
            let channel = try await bootstrap.bind(unixDomainSocketPath: path).get()
            guard chmod(path, 0o600) == 0 else {
                try? await channel.close()
                throw ControlError("cannot make \(path) private (mode 0600)")
            }
            return channel
        }
    }

    private func accept(_ channel: any Channel, isLocal: Bool) -> EventLoopFuture<Void> {
        guard connections.add(1, ordering: .relaxed).newValue <= maximumConnections else {
            connections.subtract(1, ordering: .relaxed)
            logger.warning("refused an MPD connection: \(maximumConnections) are open already")
            return channel.close()
        }
        let mailbox = messages.mailbox()
        channel.closeFuture.whenComplete { [self] _ in
            connections.subtract(1, ordering: .relaxed)
            mailbox.close()
        }
        let peer: EventLoopFuture<Void> =
            isLocal
            ? ControlServer.peerUserID(of: channel).flatMapThrowing { uid in
                guard uid == getuid() else { throw ControlError("peer uid \(uid) is not this user") }
            } : channel.eventLoop.makeSucceededVoidFuture()
        let runner = MPDCommandRunner(
            controller: controller, musicFolder: musicFolder, playlists: playlists, versions: versions, feed: feed,
            index: index, playTime: playTime, access: access, mailbox: mailbox, isLocalClient: isLocal)
        return peer.flatMapThrowing { [feed, connectionTimeout] in
            try channel.pipeline.syncOperations.addHandlers(
                ByteToMessageHandler(ControlLineDecoder(maximumLength: Self.maximumLineLength)),
                MPDConnectionHandler(runner: runner, feed: feed, timeout: TimeAmount(connectionTimeout)))
        }
    }
}

extension MPDListenAddress {
    fileprivate var isUnixSocket: Bool {
        if case .unix = self { true } else { false }
    }
}

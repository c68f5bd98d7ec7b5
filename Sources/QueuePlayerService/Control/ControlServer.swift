import FoundationEssentials
import Glibc
import Logging
import NIOCore
import NIOPosix
import QueuePlayerControl
import ServiceLifecycle
import Synchronization

/// The daemon's control socket: a Unix domain socket (mode 0600; connections from other users are refused) that
/// takes one JSON request per line and answers each with one JSON line; a `subscribe` request turns the connection
/// into a stream of state events. Built on SwiftNIO; requests are carried out by the ``PlayerController``.
///
/// Bad input (not UTF-8, not JSON, an unknown command, a field of the wrong type, a line over 64 KiB) gets an
/// error reply naming the problem, and the connection stays usable.
package final class ControlServer: Service {
    /// Connections waiting to be accepted: hundreds of clients may connect at once.
    package static let backlog: Int32 = 1024

    /// The longest request line taken, in bytes.
    package static let maximumLineLength = 64 * 1024

    package let path: String
    private let logger: Logger
    /// Completed by ``serve(_:)``: connections accepted before then wait for it.
    private let controllerPromise: EventLoopPromise<PlayerController>
    /// The bound server channel, claimed in the background from `init` on.
    private let binding: Task<any Channel, any Error>
    /// True once the socket file at `path` is this server's to remove.
    private let ownsSocketFile = Atomic(false)

    /// Starts claiming the socket at `path` in the background and returns at once, so that the daemon's other
    /// start-up work (the sound server, the state store) overlaps it; ``serve(_:)`` waits for the claim. A stale
    /// socket file left by a daemon that died is replaced. Any thread.
    package init(path: String, logger: Logger) {
        self.path = path
        self.logger = logger
        let controllerPromise = ControlEventLoop.group.next().makePromise(of: PlayerController.self)
        self.controllerPromise = controllerPromise
        binding = Task {
            try await Self.bind(path: path, controller: controllerPromise.futureResult, logger: logger)
        }
    }

    deinit {
        // Connections still waiting for a controller that never came are closed.
        controllerPromise.fail(ControlError("the daemon stopped before it served its control socket"))
    }

    /// Waits until the socket is bound, then answers its connections (those that waited included) with
    /// `controller`. Throws, naming the process, if another daemon already serves the socket, or if it cannot be
    /// bound. Call once.
    package func serve(_ controller: PlayerController) async throws {
        do {
            _ = try await binding.value
        } catch {
            controllerPromise.fail(error)
            throw error
        }
        ownsSocketFile.store(true, ordering: .releasing)
        controllerPromise.succeed(controller)
        logger.info("control socket at \(path)")
    }

    /// Binds the socket at `path`, each connection's handlers waiting for `controller`.
    private static func bind(
        path: String, controller: EventLoopFuture<PlayerController>, logger: Logger
    ) async throws -> any Channel {
        try ControlSocketPath.prepareFolder(for: path)
        if FileManager.default.fileExists(atPath: path) {
            if let pid = await Self.runningDaemon(at: path) {
                throw ControlError(
                    "another playerctl daemon (pid \(pid)) already serves \(path); stop it with "
                        + "`playerctl quit`, or give this one another --socket")
            }
            try FileManager.default.removeItem(atPath: path)
        }
        let channel = try await ServerBootstrap(group: ControlEventLoop.group)
            .serverChannelOption(.backlog, value: Self.backlog)
            .childChannelInitializer { channel in
                Self.peerUserID(of: channel).flatMap { uid in
                    guard uid == getuid() else {
                        logger.warning("refused a control connection from uid \(uid)")
                        return channel.eventLoop.makeFailedFuture(ControlError("peer uid \(uid) is not this user"))
                    }
                    return controller.hop(to: channel.eventLoop)
                }.flatMapThrowing { controller in
                    try channel.pipeline.syncOperations.addHandlers(
                        ByteToMessageHandler(ControlLineDecoder(maximumLength: Self.maximumLineLength)),
                        ControlConnectionHandler(controller: controller))
                }
            }
            .bind(unixDomainSocketPath: path).get()
        // Made private after the bind rather than by the umask, which is the whole process's and would also apply to
        // the files the rest of the start-up creates meanwhile. Until then the uid check above refuses others.
        guard chmod(path, 0o600) == 0 else {
            let reason = String(cString: strerror(errno))
            try? await channel.close()
            try? FileManager.default.removeItem(atPath: path)
            throw ControlError("cannot make \(path) private (mode 0600): \(reason)")
        }
        return channel
    }

    /// Serves connections until graceful shutdown, then closes the socket and removes its file.
    package func run() async throws {
        try? await gracefulShutdown()
        try? await binding.value.close()
        removeSocketFile()
    }

    /// Removes the socket file (after the service group ended), if ``serve(_:)`` found it bound by this server: a
    /// socket another daemon serves is never removed. Any thread.
    package func removeSocketFile() {
        guard ownsSocketFile.load(ordering: .acquiring) else { return }
        try? FileManager.default.removeItem(atPath: path)
    }

    package static func encode(_ reply: ControlReply) -> ByteBuffer {
        var data = (try? JSONEncoder().encode(reply)) ?? Data(#"{"ok":false,"error":"internal encoding error"}"#.utf8)
        data.append(UInt8(ascii: "\n"))
        return ByteBuffer(bytes: data)
    }

    /// The uid of the process at the other end of a Unix socket (SO_PEERCRED).
    package static func peerUserID(of channel: any Channel) -> EventLoopFuture<uid_t> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(ControlError("no peer credentials"))
        }
        let credentials: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return credentials.map { $0.uid }
    }

    /// The pid of the daemon answering at `path`, or nil when nothing answers (a stale socket file).
    package static func runningDaemon(at path: String) async -> pid_t? {
        do {
            let channel = try await ClientBootstrap(group: ControlEventLoop.group)
                .connect(unixDomainSocketPath: path).get()
            defer { channel.close(promise: nil) }
            let provider = channel as? any SocketOptionProvider
            let credentials: PeerCredentials? = try await provider?.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED)
            ).get()
            return credentials?.pid ?? 0
        } catch {
            return nil
        }
    }
}

/// Linux's `struct ucred` (pid, uid, gid: three 32-bit integers), which Glibc's Swift module does not export. Read by
/// `getsockopt(SO_PEERCRED)` through NIO's `unsafeGetSocketOption`, which copies exactly
/// `MemoryLayout<PeerCredentials>.size` (12) bytes; the layout of three stored 32-bit fields is the C layout.
package struct PeerCredentials: Sendable {
    package var pid: pid_t = 0
    package var uid: uid_t = 0
    package var gid: gid_t = 0
}

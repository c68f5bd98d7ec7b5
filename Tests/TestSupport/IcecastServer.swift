import Foundation
import NIOCore
import NIOPosix

/// Debian's Icecast server (`icecast2`), private to a test: on a free port of 127.0.0.1, with its logs in a folder of
/// its own, running as `nobody` (Icecast refuses to run as root unless its configuration changes the owner).
/// Stopped when released.
///
/// Starting never skips: if the server does not come up, the initializer throws and the test fails.
public final class IcecastServer: Sendable {
    /// The port it listens on, the same across restarts.
    public let port: Int
    /// The source password (user `source`), also the admin's.
    public let sourcePassword = "queueplayer-source"
    private let server: ServerProcess
    private let folder: String

    public init() async throws {
        folder = Scratch.uniquePath("icecast")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder)
        port = try LoopbackPort.free()
        // Limits that no starved test process reaches: a listener may fall 100 s behind the source (which sends 10
        // times faster than real time) and a source may go quiet for 30 s before Icecast drops either.
        let configuration = """
            <icecast>
              <limits><clients>20</clients><sources>4</sources><source-timeout>30</source-timeout>
                <queue-size>16777216</queue-size><burst-size>65536</burst-size></limits>
              <authentication><source-password>\(sourcePassword)</source-password>
                <admin-user>admin</admin-user><admin-password>\(sourcePassword)</admin-password></authentication>
              <hostname>127.0.0.1</hostname>
              <listen-socket><port>\(port)</port><bind-address>127.0.0.1</bind-address></listen-socket>
              <paths><basedir>/usr/share/icecast2</basedir><logdir>\(folder)</logdir>
                <webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot></paths>
              <logging><accesslog>access.log</accesslog><errorlog>error.log</errorlog><loglevel>2</loglevel></logging>
              <security><chroot>0</chroot>
                <changeowner><user>nobody</user><group>nogroup</group></changeowner></security>
            </icecast>
            """
        try configuration.write(toFile: "\(folder)/icecast.xml", atomically: true, encoding: .utf8)
        server = ServerProcess(
            "/usr/bin/icecast2", ["-c", "\(folder)/icecast.xml"], readyPort: port, log: "\(folder)/error.log")
        try await start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Starts the server (again, after ``stop()``) on ``port``. Throws when it does not listen within 5 s.
    public func start() async throws { try await server.start() }

    /// Stops the server at once, as a crash would: its sources and listeners lose their connections, and the port
    /// refuses until ``start()``.
    public func stop() { server.stop() }

    /// The running icecast2's process id; nil while stopped.
    public var processIdentifier: pid_t? { server.processIdentifier }

    /// Starts the server again if it crashed (not when stopped with ``stop()``), and says whether it did.
    public func startAgainIfItDied() async throws -> Bool { try await server.startAgainIfItDied() }

    /// Calls `handler` (on any thread) each time icecast2 exits after it was up without being stopped: it crashed.
    public func onCrash(_ handler: @escaping @Sendable () -> Void) { server.onCrash(handler) }

    /// The `Authorization` header of `user` (`source` or `admin`), whose password is ``sourcePassword``.
    func authorization(_ user: String) -> String {
        "Authorization: Basic " + Data("\(user):\(sourcePassword)".utf8).base64EncodedString()
    }

    /// The listeners' URL of `mount` ("/radio.mp3").
    public func url(_ mount: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(mount)")! }

    /// Sets the title Icecast sends `mount`'s listeners, as a source's software or an operator does
    /// (`/admin/metadata`, `mode=updinfo`). Throws when Icecast does not take it, with what it answered.
    public func setTitle(_ title: String, of mount: String) async throws {
        var query = URLComponents()
        query.path = "/admin/metadata"
        query.queryItems = [
            .init(name: "mount", value: mount), .init(name: "mode", value: "updinfo"),
            .init(name: "song", value: title),
        ]
        let head = "GET \(query.string!) HTTP/1.0\r\nHost: 127.0.0.1\r\n\(authorization("admin"))\r\n\r\n"
        let (channel, answer) = try await IcecastConnection.open(port: port, head: head)
        try? await channel.close()
        guard let answer, IcecastConnection.isAccepted(answer) else {
            throw IcecastRefusal(
                description: "Icecast on port \(port) did not take the title \"\(title)\" for \(mount): "
                    + (answer ?? "no answer"))
        }
    }
}

/// What Icecast answered when it refused a source or a request.
public struct IcecastRefusal: Error, CustomStringConvertible {
    /// The port, the request refused, and Icecast's status line or why there was none.
    public let description: String
}

/// A source client for an ``IcecastServer``: `PUT`s an MP3 file to a mount, over and over, at 160 KB/s (several
/// times real time) unless told a rate, until stopped.
public final class IcecastSource: Sendable {
    private let channel: any Channel
    private let sending: RepeatedTask

    /// Connects to `server` and starts sending `file` to `mount`, named `name` (`icy-name` for listeners), at
    /// `bytesPerSecond` (the file's bit rate / 8 is real time, as a station's encoder sends). Returns once Icecast has
    /// taken the source. A connection refused or closed unanswered is made again, as an encoder does, up to 10 times.
    /// Debian's icecast2 2.4.4 sometimes dies (a segfault in libc) when a source connects just after it starts; when
    /// it has, the server is started again before the next try. Throws when Icecast refuses the source, or stays
    /// gone (stopped with ``IcecastServer/stop()``).
    public init(
        server: IcecastServer, mount: String, file: URL, name: String, bytesPerSecond: Int = 163_840
    ) async throws {
        let bytes = Array(try Data(contentsOf: file))
        let head =
            "PUT \(mount) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(server.authorization("source"))\r\n"
            + "Content-Type: audio/mpeg\r\nIce-Name: \(name)\r\nIce-Public: 0\r\n\r\n"
        var attempts = 0
        while true {
            attempts += 1
            let connection = try? await IcecastConnection.open(port: server.port, head: head)
            if let (channel, answer) = connection, let answer, IcecastConnection.isAccepted(answer) {
                self.channel = channel
                break
            }
            try? await connection?.channel.close()
            let answer = connection?.answer ?? nil
            let restarted = try await server.startAgainIfItDied()
            guard answer == nil, attempts < 10 else {
                let silence = connection == nil ? "it refused the connection" : "it closed the connection unanswered"
                throw IcecastRefusal(
                    description: "Icecast on port \(server.port) refused a source for \(mount): "
                        + (answer ?? "\(silence), \(attempts) times"))
            }
            if !restarted { try await Task.sleep(for: .milliseconds(50)) }
        }
        let channel = self.channel
        let chunk = max(1, bytesPerSecond / 20)
        sending = try await channel.eventLoop.submit {
            // Only the loop's thread sends, so the offset needs no lock.
            let offset = NIOLoopBoundBox(0, eventLoop: channel.eventLoop)
            return channel.eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: .milliseconds(50)) { _ in
                let end = min(offset.value + chunk, bytes.count)
                channel.writeAndFlush(ByteBuffer(bytes: bytes[offset.value..<end]), promise: nil)
                offset.value = end % bytes.count
            }
        }.get()
    }

    /// False once the connection to Icecast is closed (by ``stop()``, or by Icecast going away).
    public var isConnected: Bool { channel.isActive }

    /// Stops sending and disconnects: Icecast drops the mount and its listeners.
    public func stop() async throws {
        sending.cancel()
        try await channel.close()
    }
}

/// One request to Icecast on a connection of its own.
private enum IcecastConnection {
    /// Whether `statusLine` (`HTTP/1.0 200 OK`) says Icecast took the request.
    static func isAccepted(_ statusLine: String) -> Bool {
        statusLine.split(separator: " ").dropFirst().first == "200"
    }

    /// Sends `head` on a new connection to `port` and returns the connection with the first line of Icecast's answer,
    /// or nil when it closed the connection (before or after the request was written) or said nothing for 5 s.
    static func open(port: Int, head: String) async throws -> (channel: any Channel, answer: String?) {
        let answered = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: String?.self)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(StatusLineReader(answered))
                    }
                }
                .connect(host: "127.0.0.1", port: port).get()
        } catch {
            // NIO's debug builds trap on a promise left unfulfilled (here: icecast2 gone, the connection refused).
            answered.succeed(nil)
            throw error
        }
        channel.eventLoop.scheduleTask(in: .seconds(5)) { answered.succeed(nil) }
        // Closed before the request could be written: dropped, as when unanswered.
        guard (try? await channel.writeAndFlush(ByteBuffer(string: head))) != nil else { return (channel, nil) }
        return (channel, try await answered.futureResult.get())
    }
}

/// Completes a promise with the first line a server sends, or with nil when the connection closes before a whole line
/// came. Runs on its channel's event loop.
private final class StatusLineReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let answered: EventLoopPromise<String?>
    private var received = ""

    init(_ answered: EventLoopPromise<String?>) { self.answered = answered }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        received += buffer.readString(length: buffer.readableBytes) ?? ""
        if let end = received.range(of: "\r\n") { answered.succeed(String(received[..<end.lowerBound])) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        answered.succeed(nil)
        context.fireChannelInactive()
    }
}

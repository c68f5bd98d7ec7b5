import FoundationEssentials
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Talks to a running daemon over its control socket (SwiftNIO): one request, one reply; or a subscription.
///
/// Blocking: each call waits on the calling thread while the exchange runs on ``ControlEventLoop``. A client verb is
/// a short process with nothing else to do meanwhile, and not going through Swift concurrency spares it starting the
/// concurrency runtime's threads. Never call it on that event loop.
package struct ControlClient: Sendable {
    /// Nothing listens at the socket.
    package struct NoPlayer: Error {}

    /// Replies can be long (a 10,000-item queue); this bounds what the client buffers.
    package static let maximumReplyLength = 64 * 1024 * 1024

    package let path: String

    /// A client of the daemon listening at `path`.
    package init(path: String) { self.path = path }

    /// Sends `request` and returns the daemon's reply. Throws ``NoPlayer`` when no daemon answers.
    package func send(_ request: ControlRequest) throws -> ControlReply {
        let received = NIOLockedValueBox<ControlReply?>(nil)
        try exchange(request) { reply in
            guard reply.event == nil else { return true }
            received.withLockedValue { $0 = reply }
            return false
        }
        guard let reply = received.withLockedValue({ $0 }) else {
            throw ControlError("the daemon closed the connection without replying")
        }
        return reply
    }

    /// Subscribes and calls `body`, on the event loop, with every state the daemon reports, until the daemon goes
    /// away.
    package func follow(_ body: @escaping @Sendable (PlayerSnapshot) -> Void) throws {
        try exchange(ControlRequest(.subscribe(interval: nil))) { reply in
            if let state = reply.state { body(state) }
            return true
        }
    }

    /// Sends `request`, then hands each reply line to `receive` (on the event loop) until it returns false or the
    /// daemon closes the connection.
    private func exchange(_ request: ControlRequest, receive: @escaping @Sendable (ControlReply) -> Bool) throws {
        let channel: any Channel
        do {
            channel = try ClientBootstrap(group: ControlEventLoop.group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers(
                            ByteToMessageHandler(ControlLineDecoder(maximumLength: Self.maximumReplyLength)),
                            ReplyHandler(receive: receive))
                    }
                }
                .connect(unixDomainSocketPath: path).wait()
        } catch {
            throw NoPlayer()
        }
        channel.writeAndFlush(Self.encode(request), promise: nil)
        try channel.closeFuture.wait()
    }

    package static func encode(_ request: ControlRequest) -> ByteBuffer {
        var data = (try? JSONEncoder().encode(request)) ?? Data()
        data.append(UInt8(ascii: "\n"))
        return ByteBuffer(bytes: data)
    }

    package static func decode(_ line: ControlLine) -> ControlReply? {
        guard case .line(let buffer) = line else { return nil }
        return try? JSONDecoder().decode(ControlReply.self, from: Data(buffer.readableBytesView))
    }
}

/// Decodes each line of a client connection into a reply for `receive`, and closes the connection once `receive`
/// returns false. Event loop only.
private final class ReplyHandler: ChannelInboundHandler {
    typealias InboundIn = ControlLine

    private let receive: @Sendable (ControlReply) -> Bool

    init(receive: @escaping @Sendable (ControlReply) -> Bool) {
        self.receive = receive
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let reply = ControlClient.decode(unwrapInboundIn(data)) else { return }
        if !receive(reply) { context.close(promise: nil) }
    }
}

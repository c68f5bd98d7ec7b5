import FoundationEssentials
import NIOCore
import NIOPosix

/// Talks to a running daemon over its control socket (SwiftNIO): one request, one reply; or a subscription.
package struct ControlClient {
    /// Nothing listens at the socket.
    package struct NoPlayer: Error {}

    /// Replies can be long (a 10,000-item queue); this bounds what the client buffers.
    package static let maximumReplyLength = 64 * 1024 * 1024

    package let path: String

    /// A client of the daemon listening at `path`.
    package init(path: String) { self.path = path }

    /// Sends `request` and returns the daemon's reply. Throws ``NoPlayer`` when no daemon answers.
    package func send(_ request: ControlRequest) async throws -> ControlReply {
        try await withConnection { inbound, outbound in
            try await outbound.write(Self.encode(request))
            for try await line in inbound {
                if let reply = Self.decode(line), reply.event == nil { return reply }
            }
            throw ControlError("the daemon closed the connection without replying")
        }
    }

    /// Subscribes and calls `body` with every state the daemon reports, until the daemon goes away.
    package func follow(_ body: (PlayerSnapshot) -> Void) async throws {
        try await withConnection { inbound, outbound in
            try await outbound.write(Self.encode(ControlRequest(command: "subscribe")))
            for try await line in inbound {
                if let state = Self.decode(line)?.state { body(state) }
            }
        }
    }

    private func withConnection<Result: Sendable>(
        _ body: (NIOAsyncChannelInboundStream<ControlLine>, NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws
            -> Result
    ) async throws -> Result {
        let channel: NIOAsyncChannel<ControlLine, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: ControlEventLoop.group)
                .connect(unixDomainSocketPath: path) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(ControlLineDecoder(maximumLength: Self.maximumReplyLength)))
                        return try NIOAsyncChannel<ControlLine, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw NoPlayer()
        }
        return try await channel.executeThenClose { inbound, outbound in try await body(inbound, outbound) }
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

import NIOCore
import NIOHTTP1

/// Lets a SHOUTcast v1 server's answer through: it starts `ICY 200 OK`, which NIO's HTTP parser refuses (it takes
/// `HTTP/`, `RTSP/` and `ICE/`), so this handler, just before the parser on each new connection, turns the first
/// line's `ICY` into `HTTP/1.0` (what the server speaks: a head, then a body until it closes). An answer that does
/// not start `ICY ` passes unchanged. It leaves the pipeline once it has seen the answer's first four bytes.
///
/// Threading: the connection's event loop, as every channel handler.
final class ShoutcastStatusLine: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private static let shoutcast = Array("ICY ".utf8)
    private static let http = Array("HTTP/1.0 ".utf8)
    /// The first bytes, held until there are enough to tell.
    private var start: ByteBuffer?

    /// Puts a handler before the HTTP response parser of `channel`, an async-http-client connection.
    static func install(on channel: any Channel) -> EventLoopFuture<Void> {
        channel.eventLoop.submit {
            let pipeline = channel.pipeline.syncOperations
            let parser = try pipeline.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)
            try pipeline.addHandler(ShoutcastStatusLine(), position: .before(parser))
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if var held = start {
            held.writeBuffer(&bytes)
            bytes = held
        }
        guard
            bytes.readableBytes >= Self.shoutcast.count
                || bytes.readableBytesView.elementsEqual(Self.shoutcast.prefix(bytes.readableBytes))
        else {
            pass(bytes, context: context)
            return
        }
        guard bytes.readableBytes >= Self.shoutcast.count else {
            start = bytes
            return
        }
        if bytes.readableBytesView.starts(with: Self.shoutcast) {
            bytes.moveReaderIndex(forwardBy: Self.shoutcast.count)
            var rewritten = context.channel.allocator.buffer(capacity: Self.http.count + bytes.readableBytes)
            rewritten.writeBytes(Self.http)
            rewritten.writeBuffer(&bytes)
            bytes = rewritten
        }
        pass(bytes, context: context)
    }

    /// Sends `bytes` on to the parser and leaves the pipeline.
    private func pass(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        start = nil
        context.fireChannelRead(wrapInboundOut(bytes))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

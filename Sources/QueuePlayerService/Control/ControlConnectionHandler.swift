import NIOCore
import QueuePlayerControl

/// Answers one control connection's requests, in order, on the connection's event loop: a request is parsed,
/// carried out by the ``PlayerController`` (whose calls take locks, never wait) and answered in the same turn of
/// the loop, with no hop to another thread. Commands that read files (`open`, `add`, `insert`: each file is checked)
/// are carried out off the loop; lines that arrive meanwhile wait, so replies keep the requests' order. After
/// `subscribe`, state events are written beside the replies, with backpressure, until the connection closes.
///
/// Threading: NIO's. The handler lives on its channel's event loop; only ``subscription`` and the file-reading
/// commands run elsewhere, and they come back to the loop through `NIOLoopBound`.
final class ControlConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ControlLine
    typealias OutboundOut = ByteBuffer

    private let controller: PlayerController
    /// Lines read and not answered yet: they wait while a file-reading command is carried out.
    private var waiting: [ControlLine] = []
    private var isCarryingOutFileCommand = false
    /// Writes state events to a subscribed connection.
    private var subscription: Task<Void, Never>?

    /// A subscription gets a snapshot at least this often (seconds of the item's time) while playing, as the protocol
    /// promises, and more often when it asks for a shorter interval.
    static let longestPositionInterval = 1.0

    init(controller: PlayerController) {
        self.controller = controller
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        waiting.append(unwrapInboundIn(data))
        answerWaitingLines(context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        subscription?.cancel()
        subscription = nil
        context.fireChannelInactive()
    }

    private func answerWaitingLines(context: ChannelHandlerContext) {
        while !isCarryingOutFileCommand, !waiting.isEmpty {
            answer(waiting.removeFirst(), context: context)
        }
    }

    private func answer(_ line: ControlLine, context: ChannelHandlerContext) {
        switch ControlRequestParser.parse(line) {
        case .failure(let id, let message):
            write(.failure(id, message), context: context)
        case .command(let id, .subscribe(let interval)):
            write(ControlReply(id: id, ok: true), context: context)
            guard subscription == nil else { return }
            let (channel, controller) = (context.channel, controller)
            let positionInterval = min(interval ?? Self.longestPositionInterval, Self.longestPositionInterval)
            subscription = Task {
                for await snapshot in controller.changes(positionInterval: positionInterval) {
                    let event = ControlServer.encode(ControlReply(event: "state", state: snapshot))
                    do {
                        try await channel.writeAndFlush(event)
                    } catch {
                        return
                    }
                }
            }
        case .command(let id, .quit):
            // Answered first: quitting closes this connection.
            write(ControlReply(id: id, ok: true), context: context)
            controller.quit()
        case .command(let id, let command) where command.readsFiles:
            isCarryingOutFileCommand = true
            let handler = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let controller = controller
            Task {
                let reply = controller.execute(command, id: id)
                handler.eventLoop.execute {
                    let (handler, context) = handler.value
                    handler.isCarryingOutFileCommand = false
                    handler.write(reply, context: context)
                    handler.answerWaitingLines(context: context)
                }
            }
        case .command(let id, let command):
            write(controller.execute(command, id: id), context: context)
        }
    }

    private func write(_ reply: ControlReply, context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ControlServer.encode(reply)), promise: nil)
    }
}

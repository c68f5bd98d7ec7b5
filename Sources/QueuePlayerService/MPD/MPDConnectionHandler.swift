import NIOCore
import QueuePlayerControl

/// Serves one MPD client: greets it, frames its lines with an ``MPDSession``, carries out each batch with an
/// ``MPDCommandRunner`` (on the event loop when quick, else off it, one batch at a time, so answers keep the lines'
/// order), and answers a waiting `idle` when a change it waits for comes.
///
/// Bounded as MPD bounds a client: a line longer than MPD's input buffer (8 KiB), lines piling up beyond
/// ``MPDSession/maximumListBytes`` while a batch runs, more answers unread than ``MPDServer/maximumOutputBytes``, or
/// nothing sent for the connection timeout while not idling (MPD's `connection_timeout`) close the connection.
///
/// Threading: NIO's. The handler lives on its channel's event loop; batches and changes come back to it through
/// `NIOLoopBound`.
final class MPDConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ControlLine
    typealias OutboundOut = ByteBuffer

    /// The greeting, with the protocol version implemented (MPD 0.23's).
    static let greeting = "OK MPD 0.23.5\n"

    private let runner: MPDCommandRunner
    private let feed: MPDChangeFeed
    private var session = MPDSession()
    private var waiting: [String] = []
    private var waitingBytes = 0
    private var isRunning = false
    private var isClosing = false
    private var listener: Int?
    private let timeout: TimeAmount
    /// When the client last sent a line or was answered an idle, on the loop's clock: the timeout counts from it.
    private var lastHeard = NIODeadline.uptimeNanoseconds(0)
    /// The check that closes the connection once the client has said nothing for ``timeout``: one at most, armed
    /// when none is and moved on when it finds the client heard since, so that a line costs no timer of its own.
    private var expiry: Scheduled<Void>?

    /// A handler carrying out its client's commands with `runner`, telling it changes from `feed`, closing the
    /// connection after `timeout` without a line from the client (idling excepted).
    init(runner: MPDCommandRunner, feed: MPDChangeFeed, timeout: TimeAmount) {
        self.runner = runner
        self.feed = feed
        self.timeout = timeout
    }

    func channelActive(context: ChannelHandlerContext) {
        let handler = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let tell: @Sendable (MPDSubsystems) -> Void = { changed in
            // A change a quick command made on this loop is answered in the same turn, before that command's reply.
            guard handler.eventLoop.inEventLoop else {
                return handler.eventLoop.execute { Self.tell(changed, to: handler) }
            }
            Self.tell(changed, to: handler)
        }
        listener = feed.add(tell)
        runner.mailbox.connect(tell)
        write(Self.greeting, context: context)
        countTimeout(context: context)
        context.fireChannelActive()
    }

    /// Answers the bound handler's waiting `idle` with `changed`, or keeps it for the next. On its event loop.
    private static func tell(
        _ changed: MPDSubsystems, to bound: NIOLoopBound<(MPDConnectionHandler, ChannelHandlerContext)>
    ) {
        let (handler, context) = bound.value
        guard !handler.isClosing, let answer = handler.session.changed(changed) else { return }
        handler.write(answer, context: context)
        handler.countTimeout(context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        isClosing = true
        expiry?.cancel()
        if let listener { feed.remove(listener) }
        listener = nil
        // The mailbox's tell holds this handler, which holds the mailbox: closing it ends the cycle.
        runner.mailbox.close()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        // The client is not reading its answers: MPD drops such a client rather than hold its output.
        if !context.channel.isWritable { close(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isClosing else { return }
        guard case .line(var buffer) = unwrapInboundIn(data) else { return close(context: context) }
        var line = buffer.readString(length: buffer.readableBytes) ?? ""
        if line.hasSuffix("\r") { line.removeLast() }
        waitingBytes += line.utf8.count
        guard waitingBytes <= MPDSession.maximumListBytes else { return close(context: context) }
        waiting.append(line)
        handleWaitingLines(context: context)
        countTimeout(context: context)
    }

    /// Counts the timeout from now. An idling client is not timed out (as MPD's are not): a check that finds it
    /// idling lapses, and the next line or idle answer arms one again.
    private func countTimeout(context: ChannelHandlerContext) {
        lastHeard = context.eventLoop.now
        armExpiry(context: context)
    }

    private func armExpiry(context: ChannelHandlerContext) {
        guard expiry == nil, !isClosing, !session.isIdling else { return }
        let handler = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        expiry = context.eventLoop.scheduleTask(deadline: lastHeard + timeout) {
            let (handler, context) = handler.value
            handler.expiry = nil
            // A batch still running is the daemon's slowness, not the client's silence.
            if handler.isRunning { handler.lastHeard = context.eventLoop.now }
            guard context.eventLoop.now >= handler.lastHeard + handler.timeout else {
                return handler.armExpiry(context: context)
            }
            if !handler.session.isIdling { handler.close(context: context) }
        }
    }

    private func handleWaitingLines(context: ChannelHandlerContext) {
        while !isRunning, !isClosing, !waiting.isEmpty {
            let line = waiting.removeFirst()
            waitingBytes -= line.utf8.count
            switch session.receive(line, mayIdle: runner.permissions.current.contains(.read)) {
            case .wait: continue
            case .close: close(context: context)
            case .write(let text): write(text, context: context)
            case .execute(let lines, _, let listOK): run(lines, listOK: listOK, context: context)
            }
        }
    }

    private func run(_ lines: [String], listOK: Bool, context: ChannelHandlerContext) {
        // The controller's calls take locks and never wait: quick commands are answered in this turn of the loop.
        if MPDCommandRunner.isQuick(lines) {
            let outcome = runner.run(lines: lines, listOK: listOK)
            write(outcome.bytes, context: context)
            if outcome.closes { close(context: context) }
            return
        }
        isRunning = true
        let handler = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let runner = runner
        Task {
            let outcome = runner.run(lines: lines, listOK: listOK)
            handler.eventLoop.execute {
                let (handler, context) = handler.value
                handler.isRunning = false
                guard !handler.isClosing else { return }
                handler.write(outcome.bytes, context: context)
                if outcome.closes { return handler.close(context: context) }
                handler.handleWaitingLines(context: context)
            }
        }
    }

    private func write(_ text: String, context: ChannelHandlerContext) {
        guard !text.isEmpty else { return }
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text)), promise: nil)
    }

    private func write(_ bytes: [UInt8], context: ChannelHandlerContext) {
        guard !bytes.isEmpty else { return }
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: nil)
    }

    private func close(context: ChannelHandlerContext) {
        guard !isClosing else { return }
        isClosing = true
        context.close(promise: nil)
    }
}

import AsyncHTTPClient
import FoundationEssentials
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Fetches a remote item into an ``HTTPBuffer`` with async-http-client, from a byte offset on, and keeps fetching
/// through dropped connections.
///
/// - The first answer decides whether the item plays: a status other than 2xx (but a gateway's 502 or 504, or 503),
///   a body that is text (an HTML error page, JSON), a playlist or audio of another format, a TLS certificate not
///   trusted, or answers that cannot be followed fail the item at once with an error naming the URL.
/// - Whatever else stops its sound from coming, before the first answer or after (a server refused, unreachable or
///   not yet resolvable, a drop, a reset, a body that ends early, a timeout, an error status once answered) is tried
///   again as ``ReconnectPolicy`` says: a live stream at its live edge for as long as it plays, a finite item for a
///   bounded time, from the next byte needed (`Range: bytes=N-`); a server that ignores ranges sends the item from
///   its start, and the bytes already had are skipped, so nothing is heard twice or missed. The log says so once
///   per loss and once when bytes come again; the decoder's context is told each failed attempt
///   (``ConnectionLoss``) and the loss's end.
///
/// Threading: runs as a task of its own; the buffer and the context are its only links to the decoder.
enum HTTPDownload {
    /// The client every remote item shares: redirects followed (at most 5, no loops), a connection given up after 5 s,
    /// a read after 10 s of silence; TLS verifies certificates against the system's store; a SHOUTcast v1 server's `ICY
    /// 200 OK` is understood (``ShoutcastStatusLine``). A connection that cannot be made (refused, no such host, a
    /// certificate not trusted) fails its request at once rather than being tried again until the connect timeout:
    /// ``run(_:from:)`` asks again as ``ReconnectPolicy`` says. It runs on an event loop of its
    /// own, so that a thread of the process that blocks on NIO's shared loops (or waits for an item to open) cannot
    /// hold up the downloads.
    static let client = HTTPClient(
        eventLoopGroup: eventLoopGroup,
        configuration: {
            var configuration = HTTPClient.Configuration(
                redirectConfiguration: .follow(max: 5, allowCycles: false),
                timeout: .init(connect: .seconds(5), read: .seconds(10)),
                http1_1ConnectionDebugInitializer: ShoutcastStatusLine.install)
            configuration.connectionPool.retryConnectionEstablishment = false
            return configuration
        }())
    /// The client's event loop: one thread, for the downloads alone (``DownloadExecutor``).
    static let eventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    /// How long an answer's head may take.
    static let headTimeout = TimeAmount.seconds(15)
    /// Starts fetching `url` from byte `offset` for the buffer's generation `generation`; `context` is told of
    /// losses and says whether anything is queued after the item.
    static func start(
        url: URL, at offset: Int, generation: Int, into buffer: HTTPBuffer, context: DecoderContext
    ) -> Task<Void, Never> {
        Task(executorPreference: DownloadExecutor.shared) {
            await run(Request(url: url, generation: generation, buffer: buffer, context: context), from: offset)
        }
    }

    /// One generation's fetch, and where it stands.
    private struct Request {
        let url: URL
        let generation: Int
        let buffer: HTTPBuffer
        let context: DecoderContext
        var logger: Logger { context.logger }
        /// What the first answer said, once there was one.
        var head: HTTPBuffer.Head? { buffer.state.withLock { $0.head } }

        /// What the reconnection policy knows of the item now.
        var item: ReconnectPolicy.Item {
            guard let head else { return .unanswered(hasItemAfter: context.hasItemAfter()) }
            return head.isLive ? .live : .finite
        }

        func error(_ code: DecoderError.Code, _ reason: String, _ suggestion: String) -> DecoderError {
            DecoderError(code, url: url, reason: reason, suggestion: suggestion)
        }

        func fail(_ error: DecoderError) {
            buffer.failed(error, generation: generation)
        }
    }

    /// Why one attempt ended before the item's end.
    private enum Interruption: Error, CustomStringConvertible {
        /// The item cannot play: tell the decoder.
        case fatal(DecoderError)
        /// The connection went away, or the server cannot serve the item now; another attempt may resume it.
        case dropped(String)

        var description: String {
            switch self {
            case .fatal(let error): error.description
            case .dropped(let reason): reason
            }
        }
    }

    /// A loss of the server, from the first failed attempt to the first bytes after it.
    private struct Loss {
        let since: ContinuousClock.Instant
        /// The item had answered before: a live stream's gap is what it sent since.
        let wasAnswered: Bool
        var failedAttempts = 0
    }

    private static func run(_ request: Request, from start: Int) async {
        var offset = start
        var loss: Loss?
        defer { if loss != nil { request.context.connectionChanged(nil) } }
        while !Task.isCancelled {
            do {
                if try await attempt(request, offset: &offset, loss: &loss) { return }
                throw Interruption.dropped("the server ended the body early")
            } catch Interruption.fatal(let error) {
                request.fail(error)
                return
            } catch {
                guard !Task.isCancelled else { return }
                let item = request.item
                // An item that never answered is asked for again only where asking again could help.
                if case .unanswered = item, !NetworkFailure.isTransient(error) {
                    request.fail(NetworkFailure.unreachable(error, url: request.url))
                    return
                }
                var current = loss ?? Loss(since: .now, wasAnswered: request.head != nil)
                current.failedAttempts += 1
                let decision = ReconnectPolicy.decide(
                    failures: current.failedAttempts, lostFor: .now - current.since, item: item,
                    jitter: .random(in: 0...1))
                guard case .retry(let wait) = decision else {
                    request.fail(givenUp(request, item: item, offset: offset, error: error))
                    return
                }
                if loss == nil { logLoss(request, item: item, offset: offset, error: error) }
                loss = current
                request.context.connectionChanged(
                    ConnectionLoss(
                        server: NetworkFailure.server(of: request.url), reason: NetworkFailure.words(for: error),
                        failedAttempts: current.failedAttempts, nextAttemptIn: wait))
                try? await Task.sleep(for: wait)
            }
        }
    }

    /// Logs a loss once, however many attempts it takes: it lasts until bytes come again.
    private static func logLoss(_ request: Request, item: ReconnectPolicy.Item, offset: Int, error: any Error) {
        var metadata: Logger.Metadata = [
            "url": "\(request.url.absoluteString)", "reason": "\(NetworkFailure.words(for: error))",
        ]
        guard case .unanswered = item else {
            metadata["byte"] = "\(offset)"
            request.logger.warning("connection lost; reconnecting", metadata: metadata)
            return
        }
        request.logger.warning("cannot reach the server; asking again", metadata: metadata)
    }

    /// The failure of an item the policy gave up.
    private static func givenUp(
        _ request: Request, item: ReconnectPolicy.Item, offset: Int, error: any Error
    ) -> DecoderError {
        let reason = NetworkFailure.words(for: error)
        guard item == .finite else {
            let patience = Int(ReconnectPolicy.unansweredItemPatience / .seconds(1))
            return request.error(
                .networkFailure, "no answer it could play for \(patience) s: \(reason)",
                "Check the URL and that the server is running and reachable")
        }
        let patience = Int(ReconnectPolicy.finiteItemPatience / .seconds(1))
        return request.error(
            .networkFailure, "the connection was lost at byte \(offset) and no byte came for \(patience) s: \(reason)",
            "Check that the server is running, then play the item again")
    }

    /// Requests the item from `offset` (a live stream: from its live edge) and copies its body into the buffer,
    /// moving `offset` past what arrived. True when the item's end was reached (or the fetch is no longer wanted);
    /// false when the body ended early, which for a live stream is whenever it ends. `loss` is the loss under way, if
    /// any: ended (and the return told) once bytes come again.
    private static func attempt(
        _ request: Request, offset: inout Int, loss: inout Loss?
    ) async throws -> Bool {
        let known = request.head
        var httpRequest = HTTPClientRequest(url: request.url.absoluteString)
        httpRequest.headers.add(name: "User-Agent", value: "QueuePlayer")
        httpRequest.headers.add(name: "Icy-MetaData", value: "1")
        httpRequest.tlsConfiguration = RemoteItemTrust.tlsConfiguration
        if offset > 0, known?.isLive != true { httpRequest.headers.add(name: "Range", value: "bytes=\(offset)-") }
        let response = try await client.execute(httpRequest, timeout: headTimeout)
        let answer = try check(response, request: request, offset: offset)
        if case .pastTheEnd = answer {
            request.buffer.completed(generation: request.generation)
            return true
        }
        var toSkip = answer.skippedBytes
        // The item offset of this body's first byte of audio.
        let bodyStart = offset - toSkip
        let interval = response.headers.first(name: "icy-metaint").flatMap { Int($0) } ?? 0
        var icy = interval > 0 ? ICYDemultiplexer(interval: interval) : nil
        var pace = ArrivalPace(startingAt: .now)
        for try await body in response.body {
            if let ended = loss, body.readableBytes > 0 {
                cameBack(request, after: ended, offset: offset)
                loss = nil
            }
            if let rate = pace.arrived(body.readableBytes, at: .now, audioByteRate: request.buffer.gauge.byteRate) {
                throw Interruption.fatal(
                    request.error(
                        .networkFailure,
                        "its server sends too slowly to play: \(Int(rate)) bytes a second over "
                            + "\(Int(ArrivalPace.window / .seconds(1))) s, under a quarter of what the audio needs",
                        "Check the network connection, or try again later"))
            }
            let (pieces, blocks) = icy?.split(body) ?? ([body], [])
            for block in blocks {
                guard let title = ICYDemultiplexer.streamTitle(in: block.bytes) else { continue }
                request.buffer.receivedTitle(title, at: bodyStart + block.audioOffset, generation: request.generation)
            }
            for var chunk in pieces {
                if toSkip > 0 {
                    let skipped = min(toSkip, chunk.readableBytes)
                    chunk.moveReaderIndex(forwardBy: skipped)
                    toSkip -= skipped
                    guard chunk.readableBytes > 0 else { continue }
                }
                let appending = ContinuousClock.now
                guard await request.buffer.append(chunk, generation: request.generation) else { return true }
                if ContinuousClock.now - appending > .milliseconds(100) { pace.restart(at: .now) }
                offset += chunk.readableBytes
            }
        }
        guard toSkip == 0, request.head?.isLive != true else { return false }
        if let length = request.head?.length, offset < length { return false }
        request.buffer.completed(generation: request.generation)
        return true
    }

    /// Bytes came again after `loss`: logged once, and told. A live stream goes on at its live edge, and the gap
    /// (what the station sent meanwhile, missed) is recorded at `offset`, where its sound goes on.
    private static func cameBack(_ request: Request, after loss: Loss, offset: Int) {
        request.context.connectionChanged(nil)
        let gap = (ContinuousClock.now - loss.since) / .seconds(1)
        let metadata: Logger.Metadata = ["url": "\(request.url.absoluteString)", "gap": "\(Int(gap * 1000)) ms"]
        guard loss.wasAnswered else {
            request.logger.notice("the server answered; the item plays", metadata: metadata)
            return
        }
        guard request.head?.isLive == true else {
            request.logger.notice("reconnected; the item goes on from byte \(offset)", metadata: metadata)
            return
        }
        request.logger.warning(
            "reconnected to the live stream at its live edge; what it sent meanwhile was missed", metadata: metadata)
        request.buffer.receivedGap(seconds: gap, at: offset, generation: request.generation)
    }

    /// What an answer means for a request from `offset`.
    private enum Answer {
        /// The body starts at the offset asked for.
        case fromOffset
        /// The body starts at the item's start: the first `skippedBytes` were had before.
        case fromStart(skippedBytes: Int)
        /// The offset is the item's end (416).
        case pastTheEnd

        var skippedBytes: Int {
            if case .fromStart(let bytes) = self { bytes } else { 0 }
        }
    }

    /// Reads the answer's head, tells it to the buffer, and says where its body starts. Throws
    /// ``Interruption/fatal(_:)`` for an answer the item cannot be played from.
    private static func check(_ response: HTTPClientResponse, request: Request, offset: Int) throws -> Answer {
        let known = request.head
        let headers = response.headers
        if response.status == .rangeNotSatisfiable, offset > 0 { return .pastTheEnd }
        guard (200..<300).contains(response.status.code) else {
            let status = "the server answered \(response.status.code) \(response.status.reasonPhrase)"
            // Once answered, an error is the server restarting (Icecast answers 404 until its source is back);
            // before, only a gateway's failure or an overload says to ask again.
            if known != nil || [502, 503, 504].contains(response.status.code) { throw Interruption.dropped(status) }
            throw Interruption.fatal(
                request.error(
                    .serverRefused, status,
                    response.status.code >= 500
                        ? "The server failed; try again later" : "Check the URL, or remove the item from the queue"))
        }
        if let type = headers.first(name: "Content-Type")?.lowercased() {
            let kind = ContentType(type)
            if kind == .playlist {
                throw Interruption.fatal(
                    request.error(
                        .notMPEGAudio, "is a playlist (\(type)), not audio",
                        "Add it to the queue as a playlist (playerctl add expands it to its entries), "
                            + "or queue a stream it lists"))
            }
            if let (reason, suggestion) = kind.refusal(of: type) {
                throw Interruption.fatal(request.error(.notMPEGAudio, reason, suggestion))
            }
        }
        // A live stream's new connection goes on where the old one stopped: its bytes follow on in the buffer.
        if known?.isLive == true { return .fromOffset }
        let bodyLength = headers.first(name: "Content-Length").flatMap { Int($0) }
        let answer: Answer
        let length: Int?
        if response.status == .partialContent, let range = ContentRange(headers.first(name: "Content-Range")) {
            guard range.first == offset else {
                throw Interruption.dropped("the server sent bytes from \(range.first), not \(offset)")
            }
            (answer, length) = (.fromOffset, range.length)
        } else {
            (answer, length) = (.fromStart(skippedBytes: offset), bodyLength)
        }
        let acceptsRanges =
            response.status == .partialContent
            || headers.first(name: "Accept-Ranges")?.lowercased() == "bytes"
        let stationName = headers.first(name: "icy-name").map(ICYDemultiplexer.text(header:))
        let head = HTTPBuffer.Head(length: length, acceptsRanges: acceptsRanges, stationName: stationName)
        if known == nil || answer.skippedBytes == 0 {
            request.buffer.receivedHead(head, generation: request.generation)
        }
        return answer
    }
}

/// A `Content-Range: bytes FIRST-LAST/LENGTH` header.
struct ContentRange: Equatable {
    /// The offset of the body's first byte in the item.
    var first: Int
    /// The item's whole length; nil when the server wrote `*`.
    var length: Int?

    init?(_ header: String?) {
        guard let header, header.hasPrefix("bytes ") else { return nil }
        let parts = header.dropFirst("bytes ".count).split(separator: "/", maxSplits: 1)
        guard parts.count == 2, let dash = parts[0].firstIndex(of: "-"), let first = Int(parts[0][..<dash]) else {
            return nil
        }
        self.first = first
        length = Int(parts[1])
    }
}

import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// An HTTP server on loopback that serves bodies the way a test asks, faults included: a status other than 200, a
/// content type, ranges answered or ignored, a connection dropped partway through a body.
///
/// Every answer closes its connection. The server writes its answers as raw bytes, so it can send what a real
/// server sends and what no well-behaved one would. Threading: any thread; the server runs on NIO's event loops.
public final class HTTPTestServer: Sendable {
    /// What the server answers for one path.
    public struct Route: Sendable {
        /// The body to serve.
        public var body: [UInt8]
        /// The status line's code and phrase.
        public var status = "200 OK"
        /// The `Content-Type` header.
        public var contentType = "audio/mpeg"
        /// Whether a `Range` request gets a 206 with the range asked for, or the whole body with a 200.
        public var acceptsRanges = true
        /// The first answers for this path stop after this many bytes of their body and close the connection.
        public var dropsAfterBytes: [Int] = []
        /// The first answers for this path stop after this many bytes of their body and send nothing more, keeping
        /// the connection open: a server gone silent, which only a read timeout notices.
        public var silentAfterBytes: [Int] = []
        /// The first answers for this path stop after this many bytes of their body and reset the connection (a TCP
        /// RST, as a crashed server or a middlebox sends).
        public var resetsAfterBytes: [Int] = []
        /// Every answer for this path stops at this byte of the file and keeps the connection open, silent, until
        /// ``HTTPTestServer/releaseStalledAnswers()`` sends the rest, or the server stops: an answer for a range
        /// from beyond it stalls at once, as a stuck server would stall a client that times out and asks again. A
        /// live stream's answer sends its whole body first, whatever the number: set, it is a stream that has not
        /// ended.
        public var stallsAfterBytes: Int?
        /// After this many bytes of its body, every answer for this path sends one byte every 100 ms: a server
        /// that trickles.
        public var tricklesAfterBytes: Int?
        /// Header lines sent beside the usual ones, such as `Location: /b` for a redirect.
        public var extraHeaders: [String] = []
        /// Answers as a live stream (Icecast) does: no length, no ranges, the body's end is the connection's.
        public var isLive = false
        /// A live stream's status line starts with this protocol: `HTTP/1.0`, or `ICY` as SHOUTcast v1 answers.
        public var liveProtocol = "HTTP/1.0"
        /// For a request that asks for ICY metadata, a live stream puts a metadata block after every this many bytes
        /// of its body (`icy-metaint`).
        public var icyInterval: Int?
        /// The `icy-metaint` the header claims, when it lies about ``icyInterval``.
        public var icyIntervalHeader: Int?
        /// The `StreamTitle` bytes of the blocks that carry one, by block number (1: after the first interval); the
        /// other blocks are empty.
        public var icyTitles: [Int: [UInt8]] = [:]
        /// The `icy-name` header's bytes.
        public var icyName: [UInt8]?

        /// A route serving `body` as MP3 audio.
        public init(body: [UInt8]) {
            self.body = body
        }

        /// A route serving the text `body` as `contentType`: a playlist, a feed, a web page.
        public init(text body: String, contentType: String) {
            self.body = Array(body.utf8)
            self.contentType = contentType
        }
    }

    /// A request as the server saw it.
    public struct Request: Sendable, Equatable {
        /// The path asked for.
        public var path: String
        /// The `Range` header, if any.
        public var range: String?

        /// A request for `path` with the `Range` header `range`.
        public init(path: String, range: String? = nil) {
            self.path = path
            self.range = range
        }
    }

    /// The routes and the requests seen, shared with the connections' handlers.
    final class Tables: Sendable {
        let routes: Mutex<[String: Route]>
        let requests = Mutex<[Request]>([])
        /// When each request's head arrived, in the order of `requests`.
        let arrivals = Mutex<[ContinuousClock.Instant]>([])
        /// The connections of stalled answers, each with the rest of its body.
        let stalled = Mutex<[(channel: any Channel, rest: [UInt8])]>([])
        /// Tests waiting for a number of requests, and that number.
        let waiters = Mutex<[(count: Int, continuation: CheckedContinuation<[Request], Never>)]>([])

        /// Notes a request and lets go the waiters it satisfies.
        func record(_ request: Request) {
            arrivals.withLock { $0.append(.now) }
            let seen = requests.withLock { requests in
                requests.append(request)
                return requests
            }
            let satisfied = waiters.withLock { waiters in
                defer { waiters.removeAll { $0.count <= seen.count } }
                return waiters.filter { $0.count <= seen.count }
            }
            for waiter in satisfied { waiter.continuation.resume(returning: seen) }
        }

        init(routes: [String: Route]) {
            self.routes = Mutex(routes)
        }
    }

    private let channel: any Channel
    private let tables: Tables

    /// The port it listens on, on 127.0.0.1.
    public let port: Int

    /// Starts a server on 127.0.0.1 serving `routes` (by path, such as "/item.mp3"), on `port` (0: one
    /// ``LoopbackPort/free()`` gives, so that it never takes a port given to a server still starting, such as
    /// Icecast's); over TLS with the PEM files `tls` names (then ``url(_:)`` is an `https` URL).
    public init(
        routes: [String: Route], port: Int = 0, tls: (certificate: String, key: String)? = nil
    ) async throws {
        let tables = Tables(routes: routes)
        self.tables = tables
        let context = try tls.map { files in
            try NIOSSLContext(
                configuration: .makeServerConfiguration(
                    certificateChain: try NIOSSLCertificate.fromPEMFile(files.certificate).map { .certificate($0) },
                    privateKey: .privateKey(try NIOSSLPrivateKey(file: files.key, format: .pem))))
        }
        scheme = tls == nil ? "http" : "https"
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let context {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
                    try channel.pipeline.syncOperations.addHandler(Responder(tables: tables))
                }
            }
            .bind(host: "127.0.0.1", port: port == 0 ? try LoopbackPort.free() : port)
            .get()
        self.port = channel.localAddress?.port ?? 0
    }

    private let scheme: String

    /// Serves each fixture of `names` (under Tests/Fixtures/generated) as `folder/NAME.mp3`, as MP3 audio.
    public func serve(fixtures names: [String], in folder: String = "") throws {
        for name in names {
            setRoute("\(folder)/\(name).mp3", Route(body: Array(try Data(contentsOf: Fixtures.mp3(name)))))
        }
    }

    /// The URL of `path` on this server.
    public func url(_ path: String) -> URL { URL(string: "\(scheme)://127.0.0.1:\(port)\(path)")! }

    /// The requests served so far, in order.
    public var requests: [Request] { tables.requests.withLock { $0 } }

    /// When each request served so far arrived, read on the server's event loop: a test task resumed by
    /// ``requests(atLeast:)`` on a busy machine may run seconds after that.
    public var arrivals: [ContinuousClock.Instant] { tables.arrivals.withLock { $0 } }

    /// The requests served, once there have been at least `count`.
    public func requests(atLeast count: Int) async -> [Request] {
        await withCheckedContinuation { continuation in
            let seen = tables.waiters.withLock { waiters -> [Request]? in
                let seen = tables.requests.withLock { $0 }
                guard seen.count < count else { return seen }
                waiters.append((count, continuation))
                return nil
            }
            if let seen { continuation.resume(returning: seen) }
        }
    }

    /// Sends the rest of every answer stalled so far, and closes their connections.
    public func releaseStalledAnswers() {
        let stalled = tables.stalled.withLock { stalled in
            defer { stalled = [] }
            return stalled
        }
        for (channel, rest) in stalled {
            channel.writeAndFlush(ByteBuffer(bytes: rest)).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// Changes what `path` answers from the next request on.
    public func setRoute(_ path: String, _ route: Route) {
        tables.routes.withLock { $0[path] = route }
    }

    /// Stops listening and closes the connections it stalls.
    public func stop() async throws {
        try await channel.close()
        for connection in tables.stalled.withLock({ $0 }) { try? await connection.channel.close() }
    }
}

/// Answers each request head from the routes, as raw bytes, and closes the connection.
private final class Responder: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart

    private let tables: HTTPTestServer.Tables

    init(tables: HTTPTestServer.Tables) {
        self.tables = tables
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        let range = head.headers.first(name: "Range")
        let wantsMetadata = head.headers.first(name: "Icy-MetaData") == "1"
        tables.record(HTTPTestServer.Request(path: head.uri, range: range))
        let route = tables.routes.withLock { routes -> HTTPTestServer.Route? in
            guard var route = routes[head.uri] else { return nil }
            // Each of the first answers takes the first cut of its list; the rest wait for the next answers.
            for cuts in [\HTTPTestServer.Route.dropsAfterBytes, \.silentAfterBytes, \.resetsAfterBytes] {
                if !route[keyPath: cuts].isEmpty { routes[head.uri]![keyPath: cuts].removeFirst() }
                route[keyPath: cuts] = Array(route[keyPath: cuts].prefix(1))
            }
            return route
        }
        let (answer, rest) =
            route.map { Self.answer($0, range: range, icy: wantsMetadata) }
            ?? (Array("HTTP/1.1 404 Not Found\r\n\r\n".utf8), [])
        let channel = context.channel
        let write = channel.writeAndFlush(ByteBuffer(bytes: answer))
        if route?.tricklesAfterBytes != nil {
            tables.stalled.withLock { $0.append((channel, [])) }
            Self.trickle(rest, on: channel)
        } else if route?.silentAfterBytes.isEmpty == false {
            tables.stalled.withLock { $0.append((channel, [])) }
        } else if route?.resetsAfterBytes.isEmpty == false {
            write.whenComplete { _ in
                // A linger of 0 makes the close a reset.
                let setting = (channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0))
                let set = setting ?? channel.eventLoop.makeSucceededVoidFuture()
                set.whenComplete { _ in channel.close(promise: nil) }
            }
        } else if route?.stallsAfterBytes == nil {
            write.whenComplete { _ in channel.close(promise: nil) }
        } else {
            tables.stalled.withLock { $0.append((channel, rest)) }
        }
    }

    /// Writes `bytes` one at a time, 100 ms apart, then closes the connection.
    private static func trickle(_ bytes: [UInt8], on channel: any Channel) {
        guard let first = bytes.first else {
            channel.close(promise: nil)
            return
        }
        channel.eventLoop.scheduleTask(in: .milliseconds(100)) {
            guard channel.isActive else { return }
            channel.writeAndFlush(ByteBuffer(bytes: [first]), promise: nil)
            trickle(Array(bytes.dropFirst()), on: channel)
        }
    }

    /// The status line, headers and body (cut short where the route drops, stalls or trickles) for a request with
    /// `range`, with ICY metadata when `icy` and the route has some; and the rest of a stalled or trickled body.
    private static func answer(
        _ route: HTTPTestServer.Route, range: String?, icy: Bool
    ) -> (answer: [UInt8], rest: [UInt8]) {
        var status = route.status
        var body = route.body
        var headers = ["Content-Type: \(route.contentType)", "Connection: close"] + route.extraHeaders
        if route.isLive {
            if icy, let interval = route.icyInterval {
                headers.append("icy-metaint: \(route.icyIntervalHeader ?? interval)")
                body = interleave(body, every: interval, titles: route.icyTitles)
            }
            let head = "\(route.liveProtocol) \(status)\r\n" + headers.map { $0 + "\r\n" }.joined()
            let name = route.icyName.map { Array("icy-name: ".utf8) + $0 + Array("\r\n".utf8) } ?? []
            return (Array(head.utf8) + name + Array("\r\n".utf8) + body, [])
        }
        var skipped = 0
        if route.acceptsRanges {
            headers.append("Accept-Ranges: bytes")
            if let first = range.flatMap(firstByte), first < body.count {
                skipped = first
                status = "206 Partial Content"
                headers.append("Content-Range: bytes \(first)-\(body.count - 1)/\(body.count)")
                body = Array(body[first...])
            }
        }
        headers.append("Content-Length: \(body.count)")
        var rest: [UInt8] = []
        let ended = route.dropsAfterBytes.first ?? route.silentAfterBytes.first ?? route.resetsAfterBytes.first
        let cut = ended ?? route.stallsAfterBytes.map { max(0, $0 - skipped) } ?? route.tricklesAfterBytes
        if let cut, cut < body.count {
            rest = ended == nil ? Array(body[cut...]) : []
            body = Array(body.prefix(cut))
        }
        let head = "HTTP/1.1 \(status)\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n"
        return (Array(head.utf8) + body, rest)
    }

    /// `body` with an ICY metadata block after every `interval` bytes: a length byte (in 16s) and the block, padded
    /// with NULs; `StreamTitle='…';` where `titles` has one for the block's number.
    private static func interleave(_ body: [UInt8], every interval: Int, titles: [Int: [UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        var number = 0
        for start in stride(from: 0, to: body.count, by: interval) {
            out += body[start..<min(start + interval, body.count)]
            guard start + interval <= body.count else { break }
            number += 1
            var block = titles[number].map { Array("StreamTitle='".utf8) + $0 + Array("';".utf8) } ?? []
            let length = (block.count + 15) / 16
            block += [UInt8](repeating: 0, count: length * 16 - block.count)
            out += [UInt8(length)] + block
        }
        return out
    }

    /// The first byte of `bytes=N-`.
    private static func firstByte(_ range: String) -> Int? {
        guard range.hasPrefix("bytes="), let dash = range.firstIndex(of: "-") else { return nil }
        return Int(range[range.index(range.startIndex, offsetBy: 6)..<dash])
    }
}

import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// Debian's `snapserver`, private to a test: one `tcp` source in server mode (what `SnapcastSink` connects to), the
/// pcm codec, and its stream, control and source ports on free ports of 127.0.0.1; no HTTP, no Avahi use beyond a
/// failed attempt it logs. Stopped when released.
///
/// Starting never skips: if the server does not come up, the initializer throws and the test fails.
public final class SnapcastServer: Sendable {
    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The server's log could not be read (the path and why).
    public struct LogUnreadable: Error, CustomStringConvertible {
        public let description: String
    }

    /// The port of the tcp source, which the player connects to.
    public let sourcePort: Int
    /// The port clients connect to.
    public let streamPort: Int
    /// The port of the JSON-RPC control interface.
    public let controlPort: Int
    /// The source's sample rate.
    public let sampleRate: Int
    /// Snapcast's buffer: what a client plays is what the source sent this long before.
    public let bufferMilliseconds: Int
    private let server: ServerProcess
    let folder: String

    /// Starts a server whose source takes `sampleRate`:16:2 on `sourcePort` (a free port by default) and whose
    /// clients play `bufferMilliseconds` behind it.
    /// With `controlScript`, snapserver runs it as the source's stream plugin.
    public init(
        sampleRate: Int = 44_100, bufferMilliseconds: Int = 1_000, sourcePort: Int? = nil, controlScript: String? = nil
    ) async throws {
        self.sampleRate = sampleRate
        self.bufferMilliseconds = bufferMilliseconds
        folder = Scratch.uniquePath("snapcast")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        self.sourcePort = try sourcePort ?? LoopbackPort.free()
        streamPort = try LoopbackPort.free()
        controlPort = try LoopbackPort.free()
        // Snapserver 0.26 takes a plain absolute path for the source's name ("Stream URI must have a name"): encoded.
        let plugin =
            controlScript.map {
                "&controlscript=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)
            } ?? ""
        let configuration = """
            [server]
            datadir = \(folder)
            [http]
            enabled = false
            [tcp]
            bind_to_address = 127.0.0.1
            port = \(controlPort)
            [stream]
            bind_to_address = 127.0.0.1
            port = \(streamPort)
            source = tcp://127.0.0.1:\(self.sourcePort)?name=QueuePlayer&mode=server&sampleformat=\(sampleRate):16:2\(plugin)
            codec = pcm
            buffer = \(bufferMilliseconds)
            [logging]
            sink = file:\(folder)/server.log
            """
        try configuration.write(toFile: "\(folder)/snapserver.conf", atomically: true, encoding: .utf8)
        // The control port is the sign that it is up (a connection to the source port would be taken as a player).
        server = ServerProcess(
            "/usr/bin/snapserver", ["-c", "\(folder)/snapserver.conf"], readyPort: controlPort,
            log: "\(folder)/server.log")
        try await start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Starts the server (again, after ``stop()``), on the same ports; returns once it answers.
    public func start() async throws { try await server.start() }

    /// The times snapserver restarted its timeline because it read its source late ("onResync" in its log): the
    /// rooms hear the stream jump there. Snapserver 0.26 does so when it completes a read more than one chunk after
    /// the chunk was due, which a busy machine's stall of its own thread causes whatever the source sent ahead.
    /// Throws when the log cannot be read: a count of 0 would pass for a server that never resynced.
    public func resyncs() throws -> Int {
        try logLines("server.log").filter { $0.contains("onResync") }.count
    }

    /// How many times the client of `room` said it would resynchronise hard: snapclient 0.26 does so when its play
    /// drifts from the server's time (the median of its last 100 or 10 chunks more than 2 or 5 ms off, of its last
    /// chunks more than 50 ms off, or one chunk 500 ms off) or its stream runs dry, logging why at info level (its
    /// `Stream::getPlayerChunk`). It then plays silence until the next chunk is due, a gap the room hears, or drops
    /// what is overdue (``lateDrops(room:)``), and logs either at debug level. A machine that delays the client's
    /// thread makes it so: under ThreadSanitizer a client 5.4 ms early inserted 280 frames mid-item. Counted: each
    /// hard resync the client synced again after, but for the stream's end, which runs dry ("Exception: Not enough
    /// frames available"), drops the part of a chunk left and finds no more ("No chunks available") in every run,
    /// after the last sound. Read it once the stream has ended. Throws when the log cannot be read.
    public func hardSyncs(room: String) throws -> Int {
        Self.hardSyncs(inClientLog: try logLines("client-\(room).log"))
    }

    /// The hard resyncs ``hardSyncs(room:)`` counts in the lines of a snapclient 0.26 log at debug level. A pure
    /// function, for any thread.
    public static func hardSyncs(inClientLog lines: [Substring]) -> Int {
        let causes = ["full() && (abs(", "abs(age > 500)", "Exception:"]
        let syncedAgain = ["Silent frames: ", "dropping old chunks"]
        var (count, pending, lastRanDry, endedAfterLast) = (0, false, false, false)
        for line in lines {
            if causes.contains(where: { line.contains($0) }) {
                (pending, lastRanDry, endedAfterLast) = (true, line.contains("Exception:"), false)
            } else if pending, syncedAgain.contains(where: { line.contains($0) }) {
                (count, pending) = (count + 1, false)
            } else if !pending, lastRanDry, line.contains("No chunks available") {
                endedAfterLast = true
            }
        }
        return endedAfterLast ? count - 1 : count
    }

    /// How late, in milliseconds, the client of `room` said it was each time it dropped what it had not played yet to
    /// catch up: snapclient 0.26, resynchronising (at the start, and after its stream ran dry, as in a pause) and
    /// finding the next chunk already due, skips ahead by that much and logs "age > 0: <ms>ms, dropping old chunks"
    /// at debug level (its `Stream::getPlayerChunk`). A machine that delays the client's thread makes it so; the
    /// room then does not hear those frames, which left the source. Not every drop loses sound: what it skips may be
    /// silence (a client that logged drops of 0 and 19 ms heard every frame). Throws when the log cannot be read.
    public func lateDrops(room: String) throws -> [Int] {
        try logLines("client-\(room).log").compactMap { line in
            guard line.contains("dropping old chunks"), let age = line.firstRange(of: "age > 0: ") else { return nil }
            return Int(line[age.upperBound...].prefix { $0.isNumber })
        }
    }

    /// What to read when a room's check fails: snapserver's log from its source's first play on, and what the
    /// client of `room` logged about its stream (chunks missing or late, frames dropped), the last 30 lines of each.
    /// A log that cannot be read is named instead.
    public func logExcerpt(room: String) -> String {
        func excerpt(_ name: String, from start: (Substring) -> Bool, keeping kept: (Substring) -> Bool) -> String {
            guard let lines = try? logLines(name) else { return "\(name): unreadable" }
            let played = lines.drop { !start($0) }.filter(kept).suffix(30)
            return "\(name):\n" + played.joined(separator: "\n")
        }
        return [
            excerpt("server.log", from: { $0.contains("=> playing") }, keeping: { _ in true }),
            excerpt("client-\(room).log", from: { _ in true }, keeping: { $0.contains("(Stream)") }),
        ].joined(separator: "\n")
    }

    /// The lines of the log `name` in the server's folder; throws when it cannot be read (no lines would pass for a
    /// log that tells nothing).
    private func logLines(_ name: String) throws -> [Substring] {
        let path = "\(folder)/\(name)"
        do {
            let log = try Data(contentsOf: URL(fileURLWithPath: path))
            return String(decoding: log, as: UTF8.self).split(separator: "\n")
        } catch {
            throw LogUnreadable(description: "cannot read \(path): \(error)")
        }
    }

    /// Stops the server's process for `duration` (SIGSTOP, then SIGCONT), as a machine whose CPU is taken away does.
    public func stall(for duration: Duration) async throws {
        guard let pid = server.processIdentifier else { return }
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        try await Task.sleep(for: duration)
    }

    /// Kills the server (a test of a server that dies mid-playback calls this) and waits until it has exited.
    public func stop() { server.stop() }

    /// Starts a `snapclient` for each of `rooms` (its host ID is the room's name), playing into the room's PulseAudio
    /// server (into `sink`, or the server's default), and returns once the server has told its control connection
    /// that every one of them is connected.
    public func connectClients(
        _ rooms: [(name: String, server: PulseServer, sink: String?)]
    ) async throws
        -> [SnapcastClient]
    {
        try await withControl(within: .seconds(10)) { control in
            let clients = try rooms.map {
                try SnapcastClient(server: self, name: $0.name, room: $0.server, sink: $0.sink)
            }
            var waiting = Set(rooms.map(\.name))
            while !waiting.isEmpty {
                guard let notification = try await control.nextNotification() else {
                    throw StartError(description: "snapclients \(waiting.sorted()) did not connect to snapserver")
                }
                waiting.subtract(SnapcastControl.connectedClients(in: notification))
            }
            return clients
        }
    }

    /// Runs `body` with a connection to the server's JSON-RPC control port, closed after `limit` (every wait on it
    /// then ends) or when `body` returns.
    public func withControl<Result: Sendable>(
        within limit: Duration, _ body: (SnapcastControl) async throws -> Result
    ) async throws -> Result {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: controlPort) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let timeout = Task {
            try await Task.sleep(for: limit)
            channel.channel.close(promise: nil)
        }
        defer { timeout.cancel() }
        return try await channel.executeThenClose { inbound, outbound in
            try await body(SnapcastControl(inbound: inbound.makeAsyncIterator(), outbound: outbound))
        }
    }
}

/// A `snapclient` playing a ``SnapcastServer``'s stream into a PulseAudio server (`--player pulse`). Stopped when
/// released.
public final class SnapcastClient: Sendable {
    private let process: Process

    /// True while the client's process runs.
    public var isRunning: Bool { process.isRunning }

    init(server: SnapcastServer, name: String, room: PulseServer, sink: String?) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["PULSE_SERVER"] = room.address
        process = try Subprocess.launch(
            "/usr/bin/snapclient",
            [
                "-h", "127.0.0.1", "-p", String(server.streamPort), "--player", "pulse", "--hostID", name,
                "--logsink", "file:\(server.folder)/client-\(name).log", "--logfilter", "*:info,Stream:debug",
            ] + (sink.map { ["--soundcard", $0] } ?? []), environment: environment)
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// A connection to snapserver's JSON-RPC control port: requests, and the notifications it pushes (one JSON object a
/// line). For one task.
public final class SnapcastControl {
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var pending: [UInt8] = []
    private var notifications: [[String: Any]] = []
    private var lastID = 0

    init(
        inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) {
        self.inbound = inbound
        self.outbound = outbound
    }

    /// Calls `method` with `params` and returns its result, or throws its error; notifications that arrive
    /// meanwhile are kept for ``nextNotification()``.
    public func call(_ method: String, _ params: [String: Any] = [:]) async throws -> Any? {
        lastID += 1
        let request: [String: Any] = ["jsonrpc": "2.0", "id": lastID, "method": method, "params": params]
        var line = try JSONSerialization.data(withJSONObject: request)
        line.append(contentsOf: "\r\n".utf8)
        try await outbound.write(ByteBuffer(bytes: line))
        while let object = try await nextObject() {
            guard object["id"] as? Int == lastID else {
                if object["method"] != nil { notifications.append(object) }
                continue
            }
            if let error = object["error"] { throw SnapcastServer.StartError(description: "\(method): \(error)") }
            return object["result"]
        }
        throw SnapcastServer.StartError(description: "\(method): snapserver closed the connection")
    }

    /// The next notification (`method` and `params`), or nil when the connection closes first.
    public func nextNotification() async throws -> [String: Any]? {
        if !notifications.isEmpty { return notifications.removeFirst() }
        while let object = try await nextObject() {
            if object["method"] != nil, object["id"] == nil { return object }
        }
        return nil
    }

    /// The clients a notification says are connected: a known client's `Client.OnConnect`, or the clients marked
    /// connected in a `Server.OnUpdate` (what a new client brings).
    static func connectedClients(in notification: [String: Any]) -> Set<String> {
        let params = notification["params"] as? [String: Any] ?? [:]
        var connected = Set<String>()
        if notification["method"] as? String == "Client.OnConnect", let id = params["id"] as? String {
            connected.insert(id)
        }
        let groups = (params["server"] as? [String: Any])?["groups"] as? [[String: Any]] ?? []
        for client in groups.flatMap({ $0["clients"] as? [[String: Any]] ?? [] })
        where client["connected"] as? Bool == true {
            if let id = client["id"] as? String { connected.insert(id) }
        }
        return connected
    }

    private func nextObject() async throws -> [String: Any]? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Data(pending[..<newline])
                pending.removeSubrange(...newline)
                if let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] { return object }
                continue
            }
            guard let bytes = try await inbound.next() else { return nil }
            pending.append(contentsOf: bytes.readableBytesView)
        }
    }
}

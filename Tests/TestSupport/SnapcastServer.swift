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
    private let process = Mutex<Process?>(nil)
    let folder: String

    /// Starts a server whose source takes `sampleRate`:16:2 on `sourcePort` (a free port by default) and whose
    /// clients play `bufferMilliseconds` behind it.
    public init(sampleRate: Int = 44_100, bufferMilliseconds: Int = 1_000, sourcePort: Int? = nil) throws {
        self.sampleRate = sampleRate
        self.bufferMilliseconds = bufferMilliseconds
        folder = "/tmp/queueplayer-test-snapcast-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        self.sourcePort = try sourcePort ?? LoopbackPort.free()
        streamPort = try LoopbackPort.free()
        controlPort = try LoopbackPort.free()
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
            source = tcp://127.0.0.1:\(self.sourcePort)?name=QueuePlayer&mode=server&sampleformat=\(sampleRate):16:2
            codec = pcm
            buffer = \(bufferMilliseconds)
            [logging]
            sink = file:\(folder)/server.log
            """
        try configuration.write(toFile: "\(folder)/snapserver.conf", atomically: true, encoding: .utf8)
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Starts the server (again, after ``stop()``), on the same ports; returns once it answers.
    public func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/snapserver")
        process.arguments = ["-c", "\(folder)/snapserver.conf"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw StartError(description: "cannot run /usr/bin/snapserver (scripts/setup installs it): \(error)")
        }
        self.process.withLock { $0 = process }
        // The control port is the sign that it is up (a connection to the source port would be taken as a player).
        let deadline = Date().addingTimeInterval(5)
        while !LoopbackPort.answers(controlPort) {
            guard Date() < deadline, process.isRunning else {
                stop()
                throw StartError(description: "snapserver did not start; see \(folder)/server.log")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// Kills the server (a test of a server that dies mid-playback calls this) and waits until it has exited.
    public func stop() {
        guard let process = process.withLock({ $0.take() }) else { return }
        // SIGKILL: children spawned from the test runner's threads inherit a mask that blocks SIGTERM.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Starts a `snapclient` for each of `rooms` (its host ID is the room's name), playing into the room's PulseAudio
    /// server (into `sink`, or the server's default), and returns once the server has told its control connection
    /// that every one of them is connected.
    public func connectClients(
        _ rooms: [(name: String, server: PulseServer, sink: String?)]
    ) async throws
        -> [SnapcastClient]
    {
        let control = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: controlPort) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        // Closing the connection ends the wait below.
        let timeout = Task {
            try await Task.sleep(for: .seconds(10))
            control.channel.close(promise: nil)
        }
        defer { timeout.cancel() }
        return try await control.executeThenClose { inbound, _ in
            let clients = try rooms.map {
                try SnapcastClient(server: self, name: $0.name, room: $0.server, sink: $0.sink)
            }
            var waiting = Set(rooms.map(\.name))
            var notifications = ControlNotifications()
            for try await bytes in inbound {
                for connected in notifications.connectedClients(in: bytes) { waiting.subtract(connected) }
                if waiting.isEmpty { return clients }
            }
            throw StartError(description: "snapclients \(waiting.sorted()) did not connect to snapserver in 10 s")
        }
    }
}

/// A `snapclient` playing a ``SnapcastServer``'s stream into a PulseAudio server (`--player pulse`). Stopped when
/// released.
public final class SnapcastClient: Sendable {
    private let process: Process

    init(server: SnapcastServer, name: String, room: PulseServer, sink: String?) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/snapclient")
        process.arguments =
            [
                "-h", "127.0.0.1", "-p", String(server.streamPort), "--player", "pulse", "--hostID", name,
                "--logsink", "file:\(server.folder)/client-\(name).log",
            ] + (sink.map { ["--soundcard", $0] } ?? [])
        var environment = ProcessInfo.processInfo.environment
        environment["PULSE_SERVER"] = room.address
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw SnapcastServer.StartError(
                description: "cannot run /usr/bin/snapclient (scripts/setup installs it): \(error)")
        }
        self.process = process
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// The notifications snapserver's JSON-RPC control port pushes, one JSON object a line, read as they arrive.
struct ControlNotifications {
    private var pending: [UInt8] = []

    /// For each notification completed by `bytes`, the clients it says are connected: a known client's
    /// `Client.OnConnect`, or the clients marked connected in a `Server.OnUpdate` (what a new client brings).
    mutating func connectedClients(in bytes: ByteBuffer) -> [Set<String>] {
        pending.append(contentsOf: bytes.readableBytesView)
        var found: [Set<String>] = []
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            let line = Data(pending[..<newline])
            pending.removeSubrange(...newline)
            guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
                let method = object["method"] as? String
            else { continue }
            let params = object["params"] as? [String: Any] ?? [:]
            var connected = Set<String>()
            if method == "Client.OnConnect", let id = params["id"] as? String { connected.insert(id) }
            let groups = (params["server"] as? [String: Any])?["groups"] as? [[String: Any]] ?? []
            for client in groups.flatMap({ $0["clients"] as? [[String: Any]] ?? [] })
            where client["connected"] as? Bool == true {
                if let id = client["id"] as? String { connected.insert(id) }
            }
            found.append(connected)
        }
        return found
    }
}

import Foundation

/// A station on a private ``IcecastServer``: a source sending one file to one mount, and the title it announces. The
/// test takes it down (the source gone, or the whole server) and brings it up again. When icecast2 crashes while the
/// station is up (Debian's 2.4.4 segfaults in libc now and then, after a source connected too), the station starts it
/// again, reconnects its source and announces its title again, as a station's encoder does after its server
/// restarted, and counts the crash: to a listener, one more outage.
///
/// Every change (bringing up, taking down, a crash's restart, a title) is carried out after the one before it has
/// finished. Threading: an actor.
public actor IcecastStation {
    public nonisolated let server: IcecastServer
    public nonisolated let mount: String
    private let file: URL
    private let name: String
    private var source: IcecastSource?
    private var isUp = false
    private var title: String?
    /// The change being carried out, or the last one: the next waits for it.
    private var lastChange: Task<Void, Never>?
    /// Crashes of icecast2 while the station was up.
    public private(set) var crashes = 0
    /// Why a crash's restart failed, for each that did (the station stays down until ``bringUp()``).
    public private(set) var failedRestarts: [String] = []
    /// When the station last began to answer with its source: at ``bringUp()``, or at a crash's restart.
    public private(set) var answeringSince = ContinuousClock.now

    /// A new server with the station up: `file` sent to `mount` (`/radio.mp3`) as `name` (`icy-name`).
    public init(mount: String, file: URL, name: String) async throws {
        server = try await IcecastServer()
        self.mount = mount
        self.file = file
        self.name = name
        try await bringUp()
        server.onCrash { [weak self] in Task { await self?.crashed() } }
    }

    /// Starts the server if it is down, connects the source and announces the title, if any; returns once Icecast has
    /// taken the source. Throws as ``IcecastSource/init(server:mount:file:name:bytesPerSecond:)`` does.
    public func bringUp() async throws {
        try await afterLastChange { station in
            station.isUp = true
            try await station.connect()
        }
    }

    /// Disconnects the source, and with `stoppingServer` stops icecast2 as well, as a crash would.
    public func takeDown(stoppingServer: Bool) async throws {
        try await afterLastChange { station in
            station.isUp = false
            try? await station.source?.stop()
            station.source = nil
            if stoppingServer { station.server.stop() }
        }
    }

    /// Sets the title Icecast sends listeners (``IcecastServer/setTitle(_:of:)``), announced again after a crash's
    /// restart. Throws when Icecast does not take it.
    public func setTitle(_ title: String) async throws {
        self.title = title
        try await afterLastChange { station in try await station.server.setTitle(title, of: station.mount) }
    }

    private func crashed() async {
        try? await afterLastChange { station in
            guard station.isUp else { return }
            station.crashes += 1
            do {
                _ = try await station.server.startAgainIfItDied()
                // The source's own retries may have started the server again and been taken already.
                if let source = station.source, source.isConnected { return }
                try? await station.source?.stop()
                station.source = nil
                try await station.connect()
            } catch {
                station.failedRestarts.append("\(error)")
            }
        }
    }

    private func connect() async throws {
        if server.processIdentifier == nil {
            try await server.start()
        } else {
            _ = try await server.startAgainIfItDied()
        }
        source = try await IcecastSource(server: server, mount: mount, file: file, name: name)
        answeringSince = .now
        if let title { try? await server.setTitle(title, of: mount) }
    }

    /// Runs `change` once the change before it has finished, whether or not that one threw, and returns its result.
    private func afterLastChange<Result: Sendable>(
        _ change: @escaping @Sendable (isolated IcecastStation) async throws -> Result
    ) async throws -> Result {
        let previous = lastChange
        let task = Task {
            await previous?.value
            return try await change(self)
        }
        lastChange = Task { _ = await task.result }
        return try await task.value
    }
}

import Foundation
import Synchronization

/// A running daemon's state events, read from a `subscribe` connection on its control socket: what end-to-end tests
/// wait on instead of sleeping or reading the log.
public final class DaemonStates: Sendable {
    /// The part of a state event the tests look at.
    public struct State: Sendable, Decodable, CustomStringConvertible {
        /// The item shown: the one being heard, or the one that plays next.
        public struct Track: Sendable, Decodable {
            public var id: Int
            public var url: String
            public var title: String?
        }

        /// `Playing`, `Paused` or `Stopped`.
        public var status: String
        /// Seconds into the current item.
        public var position: Double
        public var current: Track?
        /// `active`, `inactive`, `background` or `suspended`.
        public var application: String?
        /// Why nothing is heard though playback is wanted (`output unavailable`), if so.
        public var waiting: String?

        public var description: String {
            "\(status) \(current?.url ?? "nothing") at \(position), \(application ?? "?")"
        }

        /// True while playing with the current item heard past `seconds`.
        public func plays(past seconds: Double = 0) -> Bool { status == "Playing" && position > seconds }

        /// True while `fixture` (a name under Tests/Fixtures/generated) is the current item.
        public func isOn(_ fixture: String) -> Bool { current?.url == Fixtures.mp3(fixture).path }
    }

    private struct Line: Decodable {
        var event: String?
        var state: State?
    }

    private let socket: Int32
    /// One consumer at a time: each wait iterates it afresh, going on where the last one stopped.
    private let states: AsyncStream<State>
    /// Every state seen so far, for failure messages.
    private let seen = Mutex<[State]>([])
    private let triggers = Triggers()

    /// One-shot actions, each run by the reading thread at the first state that satisfies its condition.
    private final class Triggers: Sendable {
        private let pending = Mutex<[(condition: @Sendable (State) -> Bool, action: @Sendable () -> Void)]>([])

        func add(_ condition: @escaping @Sendable (State) -> Bool, _ action: @escaping @Sendable () -> Void) {
            pending.withLock { $0.append((condition, action)) }
        }

        /// Runs, and forgets, the actions whose condition `state` satisfies.
        func fire(at state: State) {
            let due = pending.withLock { pending in
                let split = pending.partition { $0.condition(state) }
                defer { pending.removeSubrange(split...) }
                return pending[split...]
            }
            for trigger in due { trigger.action() }
        }
    }

    /// Connects to the daemon's socket at `path` (waiting up to `timeout` seconds for the daemon to create it)
    /// and subscribes with a position event at every `interval` seconds of the item's time while playing.
    public init(socket path: String, interval: Double = 0.05, timeout: Double = 10) async throws {
        let socket = try await Self.connect(path, timeout: timeout)
        self.socket = socket
        let request = "{\"command\":\"subscribe\",\"interval\":\(interval)}\n"
        _ = request.withCString { send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        let (stream, continuation) = AsyncStream.makeStream(of: State.self)
        states = stream
        let triggers = triggers
        Thread.detachNewThread {
            var pending = Data()
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(socket, &buffer, buffer.count)
                guard count > 0 else { break }
                pending.append(contentsOf: buffer[..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = pending[pending.startIndex..<newline]
                    pending = Data(pending[(newline + 1)...])
                    if let decoded = try? JSONDecoder().decode(Line.self, from: line), decoded.event == "state",
                        let state = decoded.state
                    {
                        triggers.fire(at: state)
                        continuation.yield(state)
                    }
                }
            }
            continuation.finish()
        }
    }

    deinit {
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
    }

    /// Runs `action` on the thread that reads the socket as soon as a state read from now on satisfies `condition`,
    /// whatever else the test process is doing: a wait through ``first(within:where:)`` runs on Swift's pool, whose
    /// two threads here the parallel tests may keep busy for seconds, so what it then does comes that much later.
    /// Register it before whatever makes the state come.
    public func whenFirst(_ condition: @escaping @Sendable (State) -> Bool, do action: @escaping @Sendable () -> Void) {
        triggers.add(condition, action)
    }

    /// Waits for the next state event that satisfies `condition` (events are taken in order: a wait goes on after
    /// the one the last wait returned), and returns it; nil when the daemon goes away or after `timeout` seconds
    /// (the subscription then ends; ``history`` says what was seen).
    public func first(
        within timeout: Double = 10, where condition: @escaping @Sendable (State) -> Bool
    ) async -> State? {
        let states = states
        return await withTaskGroup(of: State?.self) { group in
            group.addTask {
                for await state in states {
                    self.seen.withLock { $0.append(state) }
                    if condition(state) { return state }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(timeout))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// The states seen so far, for a failure message.
    public var history: String { seen.withLock { $0.suffix(20).map(\.description).joined(separator: "\n") } }

    private static func connect(_ path: String, timeout: Double) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { bytes in
                path.utf8CString.withUnsafeBytes {
                    bytes.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(bytes.count - 1)))
                }
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if connected == 0 { return fd }
            close(fd)
            // The daemon has not made its socket yet: a client's reconnect, not a test's sleep.
            guard Date() < deadline else { throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path]) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

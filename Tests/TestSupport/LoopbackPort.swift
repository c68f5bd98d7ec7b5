import NIOCore
import NIOPosix
import Synchronization

/// Ports on 127.0.0.1 for the servers tests start.
public enum LoopbackPort {
    public struct Unavailable: Error, CustomStringConvertible {
        public let description = "no free port on 127.0.0.1"
    }

    /// The ports ``free()`` gave this process.
    private static let given = Mutex<Set<Int>>([])

    /// A port nothing listens on now (the system's choice for a bind to port 0, released at once), and one this
    /// process was not given before: a test that stops its server and starts it again on the same port leaves the
    /// port free meanwhile, and another test must not take it.
    public static func free() throws -> Int {
        while true {
            let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .bind(host: "127.0.0.1", port: 0).wait()
            defer { try? channel.close().wait() }
            guard let port = channel.localAddress?.port else { throw Unavailable() }
            if given.withLock({ $0.insert(port).inserted }) { return port }
        }
    }

    /// True when something accepts a connection on `port`.
    public static func answers(_ port: Int) -> Bool {
        (try? ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port).flatMap { $0.close() }.wait()) != nil
    }
}

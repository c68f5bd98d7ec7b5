import NIOCore
import NIOPosix

/// Ports on 127.0.0.1 for the servers tests start.
public enum LoopbackPort {
    public struct Unavailable: Error, CustomStringConvertible {
        public let description = "no free port on 127.0.0.1"
    }

    /// A port nothing listens on now (the system's choice for a bind to port 0, released at once).
    public static func free() throws -> Int {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).wait()
        defer { try? channel.close().wait() }
        guard let port = channel.localAddress?.port else { throw Unavailable() }
        return port
    }

    /// True when something accepts a connection on `port`.
    public static func answers(_ port: Int) -> Bool {
        (try? ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port).flatMap { $0.close() }.wait()) != nil
    }
}

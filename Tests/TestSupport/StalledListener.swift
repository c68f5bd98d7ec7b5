import Glibc

/// A port on 127.0.0.1 whose listening socket never accepts, and whose queue of connections waiting to be accepted
/// is full: the kernel drops every further SYN, so a client's connection attempt hangs until its own timeout, as one
/// to a host that has gone away does. Closed when released.
///
/// Why the raw pointers are safe: each points at a local `sockaddr_in` for the length of the call it is passed to.
public final class StalledListener: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The port that stalls.
    public let port: Int
    private let listener: Int32
    private let queued: Int32

    public init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let queued = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        self.queued = queued
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        // A backlog of 0 leaves room for one connection waiting to be accepted: the one made below fills it.
        guard listener >= 0, queued >= 0, bound == 0, listen(listener, 0) == 0 else {
            throw Failure(description: "cannot listen on 127.0.0.1: errno \(errno)")
        }
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(queued, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw Failure(description: "cannot fill the listener's queue: errno \(errno)") }
    }

    deinit {
        close(queued)
        close(listener)
    }
}

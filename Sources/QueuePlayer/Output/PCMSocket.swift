import Glibc

/// A TCP connection that a sink's thread writes raw PCM into with blocking sends: a wrapper of the socket C API.
///
/// It is not swift-nio because the render loop must not allocate: a channel write takes a buffer of its own and
/// hops to an event loop for each period, while `send` here reads straight from the loop's preallocated buffer.
/// The connection is made once, off the render thread, with a time limit; the descriptor is a constant closed on
/// deinit, so the type is `Sendable` without a lock. Unsafe pointers stay in this file: `getaddrinfo`'s list is
/// freed before `connect(host:port:timeoutMilliseconds:)` returns, and `send(_:)` reads only the buffer it is given,
/// during the call.
final class PCMSocket: Sendable {
    /// Why a connection could not be made, in words (`connection refused`, `no such host`).
    struct ConnectError: Error, CustomStringConvertible {
        let description: String
    }

    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        Glibc.close(descriptor)
    }

    /// Connects to `host` (a name, IPv4 or IPv6 address) at `port`, trying each address the name resolves to, each
    /// for at most `timeoutMilliseconds`. A send then blocks for at most `sendTimeoutMilliseconds` before it fails.
    static func connect(
        host: String, port: Int, timeoutMilliseconds: Int32 = 2_000, sendTimeoutMilliseconds: Int = 2_000
    ) throws(ConnectError) -> PCMSocket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            throw ConnectError(description: String(cString: gai_strerror(resolved)))
        }
        defer { freeaddrinfo(list) }
        var lastError = ECONNREFUSED
        for address in sequence(first: first, next: { $0.pointee.ai_next }) {
            let info = address.pointee
            let descriptor = Glibc.socket(
                info.ai_family, info.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.ai_protocol)
            guard descriptor >= 0 else {
                lastError = errno
                continue
            }
            let connection = PCMSocket(descriptor: descriptor)
            let error = connection.connect(
                to: info.ai_addr, length: info.ai_addrlen, timeoutMilliseconds: timeoutMilliseconds)
            if error == 0 {
                connection.setSendTimeout(milliseconds: sendTimeoutMilliseconds)
                return connection
            }
            lastError = error
        }
        throw ConnectError(description: String(cString: strerror(lastError)))
    }

    /// Sends all of `bytes`, blocking until the peer has taken them into its socket buffer. False when the
    /// connection failed (closed or reset by the peer, or the send timed out): the connection is then useless.
    /// Allocates nothing: safe on a render thread.
    func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = Glibc.send(descriptor, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Connects without blocking for longer than `timeoutMilliseconds`; returns 0 or the errno of the failure.
    private func connect(
        to address: UnsafeMutablePointer<sockaddr>, length: socklen_t, timeoutMilliseconds: Int32
    )
        -> Int32
    {
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(descriptor, F_SETFL, flags) }
        if Glibc.connect(descriptor, address, length) == 0 { return 0 }
        guard errno == EINPROGRESS else { return errno }
        var poll = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        let ready = Glibc.poll(&poll, 1, timeoutMilliseconds)
        guard ready > 0 else { return ready == 0 ? ETIMEDOUT : errno }
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &size) == 0 else { return errno }
        return error
    }

    private func setSendTimeout(milliseconds: Int) {
        var timeout = timeval(tv_sec: milliseconds / 1_000, tv_usec: (milliseconds % 1_000) * 1_000)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
}

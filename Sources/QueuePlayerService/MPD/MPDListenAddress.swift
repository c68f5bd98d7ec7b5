/// Where the MPD protocol is served: `HOST:PORT` (an IPv6 host in brackets: `[::1]:6600`) or a Unix socket's path
/// (anything with a `/`).
package enum MPDListenAddress: Equatable, Sendable, CustomStringConvertible {
    case tcp(host: String, port: Int)
    case unix(path: String)

    /// Reads `text`; nil when it is neither a path nor a `HOST:PORT` with a port of 1 to 65535.
    package init?(_ text: String) {
        if text.contains("/") {
            self = .unix(path: text)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65_535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        self = .tcp(host: host, port: port)
    }

    /// True for an address only this machine can reach: a Unix socket, or a loopback host.
    package var isLoopback: Bool {
        switch self {
        case .unix: true
        case .tcp(let host, _): host == "localhost" || host == "::1" || host.hasPrefix("127.")
        }
    }

    package var description: String {
        switch self {
        case .unix(let path): path
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }
}

import AsyncHTTPClient
import FoundationEssentials
import Glibc
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// What an error from a request for a remote item means: whether asking again could help, and how to say it.
///
/// Pure; any thread.
enum NetworkFailure {
    /// True when another attempt could succeed: the server or the network may come back (refused, unreachable, a
    /// name that does not resolve yet, a timeout, a reset, a server error). False for a URL the client cannot use,
    /// a server whose answers cannot be followed, and a TLS certificate that is not trusted: those fail at once.
    static func isTransient(_ error: any Error) -> Bool {
        if misconfiguration(error) != nil { return false }
        if let error = error as? NIOSSLError { return error == .uncleanShutdown }
        if let error = error as? HTTPClientError { return transientClientErrors.contains(error) }
        return true
    }

    private static let transientClientErrors: [HTTPClientError] = [
        .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .remoteConnectionClosed, .uncleanShutdown,
        .tlsHandshakeTimeout, .getConnectionFromPoolTimeout,
    ]

    /// Why an attempt failed, in a few words for a status line ("connection refused").
    static func words(for error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first { return words(for: first.error) }
            return "cannot resolve the host name"
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return "connection refused"
            case ECONNRESET: return "connection reset"
            case ENETUNREACH: return "network unreachable"
            case EHOSTUNREACH: return "host unreachable"
            case ETIMEDOUT: return "timed out"
            default: return String(cString: strerror(error.errnoCode)).lowercased()
            }
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout: return "no connection within 5 s"
            case .readTimeout: return "nothing received for 10 s"
            case .deadlineExceeded: return "no answer within 15 s"
            case .remoteConnectionClosed: return "the server closed the connection"
            default: break
            }
        }
        if let error = error as? ChannelError, case .connectTimeout = error { return "no connection in time" }
        return String(describing: error)
    }

    /// Why the first request for `url` got no answer that can be played: the host could not be reached, its TLS
    /// certificate is not trusted (refused, never skipped), or its answers cannot be followed.
    static func unreachable(_ error: any Error, url: URL) -> DecoderError {
        if let reason = misconfiguration(error) {
            return DecoderError(
                .networkFailure, url: url, reason: reason,
                suggestion: "Check the URL; if it is right, its server is misconfigured")
        }
        guard error is NIOSSLError else {
            return DecoderError(
                .networkFailure, url: url, reason: "cannot fetch it: \(words(for: error))",
                suggestion: "Check the URL and that the server is running and reachable")
        }
        return DecoderError(
            .networkFailure, url: url,
            reason: "its server's TLS certificate is not trusted, so it was not fetched: \(error)",
            suggestion: "Check the URL; a server with a self-signed, expired or mismatched certificate is refused, "
                + "never skipped. A server with an authority of its own can be trusted (queueplayerd --tls-ca-file)")
    }

    /// What is wrong with a server whose answers cannot be followed: redirects in a loop or past the limit, headers
    /// past NIO's bound.
    private static func misconfiguration(_ error: any Error) -> String? {
        if let error = error as? HTTPClientError {
            if error == .redirectCycleDetected { return "its server redirects in a loop" }
            if error == .redirectLimitReached { return "its server redirected more than 5 times" }
        }
        if let error = error as? HTTPParserError, error == .headerOverflow {
            return "its server's answer has more than 80 KiB of headers"
        }
        return nil
    }

    /// The server of `url` as a status line names it: its host, and its port when the URL gives one.
    static func server(of url: URL) -> String {
        let host = url.host(percentEncoded: false) ?? url.absoluteString
        return url.port.map { "\(host):\($0)" } ?? host
    }
}

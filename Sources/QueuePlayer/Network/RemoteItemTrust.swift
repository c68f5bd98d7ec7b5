import NIOSSL
import Synchronization

/// Which certificate authorities a remote item's server may present a certificate from: the system's store, and any
/// added here, such as a home server's own authority (mpv's `--tls-ca-file`). A certificate that chains to none of
/// them is refused, never skipped.
///
/// Process-wide: an authority added applies to every request made after, by every player. Any thread.
public enum RemoteItemTrust {
    /// Why a file of certificate authorities was not taken: it names the file and says what to do.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The file, its problem, and what to give instead.
        public let description: String
    }

    private static let added = Mutex<[NIOSSLCertificate]>([])

    /// Trusts, beside the system's store, the certificate authorities in the PEM file at `path` (one or more
    /// `-----BEGIN CERTIFICATE-----` blocks). Throws, trusting nothing of it, when the file cannot be read or holds
    /// no certificate.
    public static func addCertificateAuthorities(fromPEMFile path: String) throws(Failure) {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(path)
        } catch {
            throw Failure(
                description: "\(path): cannot be read as PEM certificates (\(error)); give a readable file of "
                    + "certificate authorities in PEM form")
        }
        guard !certificates.isEmpty else {
            throw Failure(description: "\(path): holds no certificate; give a file of PEM certificate authorities")
        }
        added.withLock { $0 += certificates }
    }

    /// The TLS configuration requests use: nil (the client's own, the system's store) until an authority is added.
    static var tlsConfiguration: TLSConfiguration? {
        let certificates = added.withLock { $0 }
        guard !certificates.isEmpty else { return nil }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.additionalTrustRoots = [.certificates(certificates)]
        return configuration
    }
}

import FoundationEssentials
import Glibc

/// Where the control socket lives: `$XDG_RUNTIME_DIR/queueplayer/control.sock`, or, without `XDG_RUNTIME_DIR`,
/// `/tmp/queueplayer-UID/control.sock`. The folder is created with mode 0700.
package enum ControlSocketPath {
    /// How the path is chosen without `--socket`, for the option's help.
    package static let defaultDescription =
        "Default: $XDG_RUNTIME_DIR/queueplayer/control.sock, else /tmp/queueplayer-UID/control.sock."

    package static func resolve(
        _ explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    )
        -> String
    {
        if let explicit { return explicit }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return runtime + "/queueplayer/control.sock"
        }
        return "/tmp/queueplayer-\(getuid())/control.sock"
    }

    /// Creates the socket's folder, readable by this user only.
    package static func prepareFolder(for path: String) throws {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }
}

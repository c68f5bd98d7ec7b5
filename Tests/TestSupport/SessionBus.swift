import Foundation

/// A private D-Bus session bus (`dbus-daemon --session`), for the MPRIS tests: no systemd, no X, works as root.
/// Stopped when released.
public final class SessionBus {
    /// The value for `DBUS_SESSION_BUS_ADDRESS`.
    public let address: String
    private let daemon: LineReader
    private let folder = Scratch.uniquePath("bus")

    /// Starts the bus and returns once it listens (`dbus-daemon` prints its address then); throws when it does not
    /// within 10 s.
    public init() async throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        daemon = try LineReader(
            "/usr/bin/dbus-daemon",
            ["--session", "--nofork", "--nopidfile", "--address=unix:path=\(folder)/bus", "--print-address=1"],
            environment: ProcessInfo.processInfo.environment)
        guard let printed = await daemon.nextLine(within: 10), printed.hasPrefix("unix:") else {
            daemon.stop()
            throw Subprocess.LaunchError(description: "dbus-daemon --session did not print its address within 10 s")
        }
        address = printed
    }

    deinit {
        daemon.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Waits until `name` has an owner on the bus (`gdbus wait`, which follows the bus's NameOwnerChanged signals);
    /// false after `timeout` seconds.
    public func waitForName(_ name: String, timeout: Int = 10) async -> Bool {
        let result = await Subprocess.run(
            "/usr/bin/gdbus", ["wait", "--session", "--timeout", "\(timeout)", name],
            environment: environment(ProcessInfo.processInfo.environment))
        return result.status == 0
    }

    /// `environment` with this bus as the session bus.
    public func environment(_ environment: [String: String]) -> [String: String] {
        environment.merging(["DBUS_SESSION_BUS_ADDRESS": address]) { $1 }
    }
}

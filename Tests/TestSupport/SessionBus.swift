import Foundation

/// A private D-Bus session bus (`dbus-daemon --session`), for the MPRIS tests: no systemd, no X, works as root.
/// Stopped when released.
public final class SessionBus {
    /// The value for `DBUS_SESSION_BUS_ADDRESS`.
    public let address: String
    private let process = Process()
    private let folder = Scratch.uniquePath("bus")

    public init() async throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        address = "unix:path=\(folder)/bus"
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--session", "--nofork", "--nopidfile", "--address=\(address)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try Subprocess.spawn(process)
        let deadline = Date().addingTimeInterval(5)
        while !FileManager.default.fileExists(atPath: "\(folder)/bus"), Date() < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
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

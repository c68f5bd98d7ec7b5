import Foundation

/// The decoder fixtures and their `mpg123 -w` reference decodes, generated once per test run by
/// `scripts/make-fixtures` into `Tests/Fixtures/generated` (ignored by git).
public enum Fixtures {
    /// The package root, found from this file's path.
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The folder holding the generated fixtures; generating them on first use. Thread-safe (a lazy static).
    public static let directory: URL = {
        let directory = packageRoot.appendingPathComponent("Tests/Fixtures/generated")
        let result = Subprocess.runBlocking(
            packageRoot.appendingPathComponent("scripts/make-fixtures").path, [directory.path])
        precondition(result.status == 0, "scripts/make-fixtures failed: \(result.standardError)")
        return directory
    }()

    /// The built `playerctl` binary, beside the test bundle.
    public static let playerctl: URL = builtExecutable("playerctl")

    /// The package's executable `name` as built beside the test bundle (`playerctl`, or a test's child process).
    public static func builtExecutable(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// An environment for one run of `playerctl`: the test runner's, with `XDG_RUNTIME_DIR`, `XDG_STATE_HOME` and
    /// `XDG_CONFIG_HOME` in new private folders and no session bus, so that daemons running side by side never
    /// share a control socket, a state store, a manifest or a bus name, and nothing touches the user's own.
    public static func isolatedEnvironment() -> [String: String] {
        let base = Scratch.uniquePath("env")
        var environment = ProcessInfo.processInfo.environment
        // Never the user's session bus: MPRIS tests bring a private one (SessionBus).
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        for (key, folder) in [
            ("XDG_RUNTIME_DIR", "runtime"), ("XDG_STATE_HOME", "state"), ("XDG_CONFIG_HOME", "config"),
        ] {
            let path = "\(base)/\(folder)"
            try? FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            environment[key] = path
        }
        return environment
    }

    /// The MP3 fixture `name` (without extension).
    public static func mp3(_ name: String) -> URL { directory.appendingPathComponent("\(name).mp3") }

    /// The float reference decode of fixture `name`, as interleaved stereo.
    public static func referenceFloat(_ name: String) throws -> [Float] {
        try WAVFile(contentsOf: directory.appendingPathComponent("\(name).f32.wav")).stereoFloatSamples()
    }

    /// The 16-bit reference decode of fixture `name`, as interleaved stereo.
    public static func referenceInt16(_ name: String) throws -> [Int16] {
        try WAVFile(contentsOf: directory.appendingPathComponent("\(name).s16.wav")).stereoInt16Samples()
    }
}

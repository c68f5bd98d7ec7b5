import Foundation

/// Runs helper programs (scripts, parec, the built playerctl) for the tests.
public enum Subprocess {
    public struct Result: Sendable {
        public var status: Int32
        public var standardOutput: String
        public var standardError: String
    }

    /// Runs `executable` with `arguments` to completion and returns its status and output. Output goes through
    /// temporary files, so a chatty child can never block on a full pipe.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let outputURL = temporaryFile("out")
        let errorURL = temporaryFile("err")
        defer {
            try? FileManager.default.removeItem(at: outputURL)
            try? FileManager.default.removeItem(at: errorURL)
        }
        do {
            process.standardOutput = try FileHandle(forWritingTo: outputURL)
            process.standardError = try FileHandle(forWritingTo: errorURL)
            process.standardInput = FileHandle.nullDevice
            try process.run()
        } catch {
            return Result(status: -1, standardOutput: "", standardError: "\(executable): \(error)")
        }
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            standardOutput: (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "")
    }

    /// An empty file in the temporary directory, unique to this call.
    public static func temporaryFile(_ suffix: String) -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("queueplayer-\(UUID().uuidString).\(suffix)")
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        return url
    }
}

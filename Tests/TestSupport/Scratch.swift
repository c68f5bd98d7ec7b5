import Foundation

/// Where tests keep their files: one folder per test process, `/tmp/queueplayer-tests-PID`, removed when the process
/// exits. The first use also removes the folders of test processes that no longer run (killed by a time limit, or
/// crashed), so that runs of the suite, however many and however they end, leave nothing behind.
///
/// Threading: any thread (the folder is made once, by a lazy static).
public enum Scratch {
    private static let prefix = "/tmp/queueplayer-tests-"

    /// This process's folder, made on first use (mode 0755: servers that run as `nobody` reach their own folders in
    /// it).
    public static let folder: String = {
        removeFoldersOfEndedProcesses()
        let folder = "\(prefix)\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: "\(Scratch.prefix)\(getpid())") }
        return folder
    }()

    /// A path in this process's folder that nothing else has: `name` followed by a unique tag. Nothing is made there.
    public static func uniquePath(_ name: String) -> String {
        "\(folder)/\(name)-\(UUID().uuidString.prefix(8))"
    }

    /// A new empty folder in this process's folder, named after `name`.
    public static func newFolder(_ name: String) -> String {
        let path = uniquePath(name)
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private static func removeFoldersOfEndedProcesses() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        let scratchPrefix = String(prefix.dropFirst("/tmp/".count))
        for name in names where name.hasPrefix(scratchPrefix) {
            guard let pid = pid_t(name.dropFirst(scratchPrefix.count)), pid != getpid() else { continue }
            if kill(pid, 0) == -1, errno == ESRCH { try? FileManager.default.removeItem(atPath: "/tmp/\(name)") }
        }
    }
}

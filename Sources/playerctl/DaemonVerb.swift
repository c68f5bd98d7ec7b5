import ArgumentParser
import Glibc

/// `playerctl daemon`: replaces this process (exec) with `queueplayerd`, the daemon's own executable, given the same
/// arguments. The verbs stay in this small executable, which starts in about a millisecond because it links neither
/// libpulse nor the state store; `playerctl daemon --help` is the daemon's help.
struct DaemonVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the player service and play ITEMs in order (`playerctl daemon --help` lists its options).")

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("The daemon's options and ITEMs.", valueName: "arg"))
    var arguments: [String] = []

    func run() throws {
        DaemonLauncher.run(arguments)
    }
}

/// Finds and executes `queueplayerd`.
enum DaemonLauncher {
    /// The daemon's executable, installed beside `playerctl`.
    static let executableName = "queueplayerd"

    /// When `arguments` (without the program's name) start with `daemon`, runs the daemon with the rest and does not
    /// return; otherwise returns. Called before the arguments are parsed, so that `playerctl daemon --help` is the
    /// daemon's help.
    static func runIfAsked(_ arguments: [String]) {
        guard arguments.first == DaemonVerb.configuration.commandName else { return }
        run(Array(arguments.dropFirst()))
    }

    /// Replaces this process with the daemon, given `arguments`: the executable beside this one (symbolic links
    /// resolved), else `queueplayerd` on `PATH`. Says what to do and exits 1 when there is none.
    static func run(_ arguments: [String]) -> Never {
        let beside = besideThisExecutable()
        if let beside { execute(beside, arguments, searchingPath: false) }
        execute(executableName, arguments, searchingPath: true)
        let looked = (beside.map { "\($0), then " } ?? "") + "PATH"
        let message = "playerctl: cannot start the daemon: \(executableName) was not found (looked at \(looked)); "
            + "install it beside playerctl (`swift build -c release --product \(executableName)` builds it)\n"
        message.utf8CString.withUnsafeBufferPointer { _ = write(STDERR_FILENO, $0.baseAddress, $0.count - 1) }
        exit(1)
    }

    /// `queueplayerd` in the folder of this process's executable (read from `/proc/self/exe`), if it exists.
    private static func besideThisExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let path = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        let candidate = String(path[...slash]) + executableName
        return access(candidate, X_OK) == 0 ? candidate : nil
    }

    /// Executes `program` with `arguments`; returns only if that failed.
    private static func execute(_ program: String, _ arguments: [String], searchingPath: Bool) {
        // Unsafe pointers: a NULL-terminated C array of copies of the strings, alive until exec replaces the
        // process or fails (then freed); nothing else sees them.
        let cStrings = ([program] + arguments).map { strdup($0) } + [nil]
        defer { cStrings.forEach { free($0) } }
        if searchingPath {
            execvp(program, cStrings)
        } else {
            execv(program, cStrings)
        }
    }
}

import Foundation

#if QUEUEPLAYER_FUZZING
    /// The fuzz target this process runs, from `QUEUEPLAYER_FUZZ_TARGET` (read once, before the first input).
    nonisolated(unsafe) private var selectedTarget = FuzzTarget.mp3

    /// libFuzzer's set-up hook: picks the target. `scripts/fuzz` sets the variable.
    @_cdecl("LLVMFuzzerInitialize")
    public func fuzzerInitialize(
        _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>>
    )
        -> CInt
    {
        let name = ProcessInfo.processInfo.environment["QUEUEPLAYER_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            let message = "QUEUEPLAYER_FUZZ_TARGET is \"\(name)\"; set it to one of \(names) (scripts/fuzz does)\n"
            FileHandle.standardError.write(Data(message.utf8))
            exit(64)
        }
        selectedTarget = target
        return 0
    }

    /// libFuzzer's entry point: one input.
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzerTestOneInput(_ data: UnsafeRawPointer?, _ size: Int) -> CInt {
        selectedTarget.run(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
#else
    /// Outside a fuzzing build: replays files (a corpus, or the input that crashed a fuzzer) through a fuzz target, so
    /// the corpus in the repository runs as a test in every build.
    ///
    /// Usage: QueuePlayerFuzz TARGET FILE_OR_FOLDER...
    @main
    struct QueuePlayerFuzzReplay {
        static func main() throws {
            let arguments = CommandLine.arguments.dropFirst()
            guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else {
                FileHandle.standardError.write(
                    Data(
                        "usage: QueuePlayerFuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) FILE...\n"
                            .utf8))
                exit(64)
            }
            var replayed = 0
            for path in arguments.dropFirst() {
                for file in try inputs(at: path) {
                    let bytes = try Data(contentsOf: file)
                    bytes.withUnsafeBytes { target.run($0) }
                    replayed += 1
                }
            }
            print("\(name): replayed \(replayed) inputs")
        }

        /// The file at `path`, or the files in the folder at `path` (sorted, hidden ones left out).
        private static func inputs(at path: String) throws -> [URL] {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
            }
            guard isFolder.boolValue else { return [URL(fileURLWithPath: path)] }
            return try FileManager.default.contentsOfDirectory(atPath: path).filter { !$0.hasPrefix(".") }.sorted()
                .map { URL(fileURLWithPath: path).appendingPathComponent($0) }
        }
    }
#endif

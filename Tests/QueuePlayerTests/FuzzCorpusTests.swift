import Foundation
import TestSupport
import TestTiers
import Testing

/// The fuzzers' corpus, kept in Tests/Fuzz/Corpus and grown by `scripts/fuzz`, replayed through the same targets in
/// the ordinary build: every input the fuzzers kept, and every one that once crashed them, must run to its end.
@Suite("The fuzz corpus replays without a crash", .tier(.deterministic))
struct FuzzCorpusTests {
    @Test("every input of the target's corpus", arguments: ["mp3", "control", "manifest", "template", "mpd"])
    func replay(_ target: String) async throws {
        let corpus = Fixtures.packageRoot.appendingPathComponent("Tests/Fuzz/Corpus/\(target)").path
        let inputs = try FileManager.default.contentsOfDirectory(atPath: corpus).filter { !$0.hasPrefix(".") }
        #expect(inputs.count >= 4, "the \(target) corpus has \(inputs.count) inputs")
        let result = await Subprocess.run(Fixtures.builtExecutable("QueuePlayerFuzz").path, [target, corpus])
        #expect(result.status == 0, "QueuePlayerFuzz \(target): \(result.standardError)")
        #expect(result.standardOutput == "\(target): replayed \(inputs.count) inputs\n")
    }
}

// Code of a program that uses the QueuePlayer library from outside its package: `scripts/api check` type-checks it,
// with Tests/QueuePlayerTests/RecordingSink.swift (a sink of the program's own), against the module built, where
// nothing `package` is visible. The example of ChoosingASink.md in the DocC catalog, kept compiling.
import Foundation
import Logging
import QueuePlayer

/// A player on the sink the command line asks for: no sound server, a sink of the program's own, or PulseAudio.
func makePlayer(arguments: [String], logger: Logger) throws -> QueuePlayer {
    let sink: any AudioSink
    if arguments.contains("--silent") {
        sink = NullSink(pacing: .realTime)
    } else if arguments.contains("--record") {
        sink = RecordingSink()
    } else {
        sink = try PulseAudioSink(logger: logger)
    }
    let items = arguments.filter { !$0.hasPrefix("--") }.map { PlayerItem(url: URL(fileURLWithPath: $0)) }
    return QueuePlayer(items: items, sink: sink, logger: logger)
}

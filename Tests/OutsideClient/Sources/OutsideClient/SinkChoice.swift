// The example of ChoosingASink.md in the DocC catalog, kept compiling and running outside the package.
import Foundation
import Logging
import QueuePlayer

/// The sink the command line asks for: no sound server, a sink of the program's own, or PulseAudio.
func makeSink(arguments: [String], logger: Logger) throws -> any AudioSink {
    if arguments.contains("--silent") {
        return NullSink(pacing: .realTime)
    } else if arguments.contains("--record") {
        return RecordingSink()
    } else {
        return try PulseAudioSink(logger: logger)
    }
}

/// A player of the files the command line names, on the sink it asks for.
func makePlayer(arguments: [String], sink: any AudioSink, logger: Logger) -> QueuePlayer {
    let items = arguments.filter { !$0.hasPrefix("--") }.map { PlayerItem(url: URL(fileURLWithPath: $0)) }
    return QueuePlayer(items: items, sink: sink, logger: logger)
}

import Foundation
import Logging
import QueuePlayer

// OutsideClient [--silent | --record] [--out=FILE] FILE...: plays the files to the end of the queue on the sink
// chosen (SinkChoice.swift); with --record and --out, writes what its own sink heard there (32-bit float, stereo,
// little-endian) and prints the number of frames. Exits 1 when an item fails.
let arguments = Array(CommandLine.arguments.dropFirst())
let logger = Logger(label: "outside-client")
let sink = try makeSink(arguments: arguments, logger: logger)
let player = makePlayer(arguments: arguments, sink: sink, logger: logger)
let events = player.playbackEvents()
player.play()
playing: for await event in events {
    switch event {
    case .itemFailed(_, let error):
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    case .queueFinished:
        break playing
    default:
        continue
    }
}
player.shutdown()
if let recording = sink as? RecordingSink,
    let out = arguments.first(where: { $0.hasPrefix("--out=") })?.dropFirst("--out=".count)
{
    let samples = recording.recording
    try samples.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: String(out)))
    print("\(samples.count / 2) frames")
}

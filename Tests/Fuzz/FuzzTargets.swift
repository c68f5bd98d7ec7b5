import Foundation
import Glibc
import Logging
import NIOCore
import NIOEmbedded
import QueuePlayerControl
import QueuePlayerService

@testable import QueuePlayer

/// The inputs the fuzzer feeds, one function each: arbitrary bytes must give a result or an error, never a crash,
/// a hang or a leak.
enum FuzzTarget: String, CaseIterable {
    /// Bytes as an MP3 item: opened by the real decoder (libmpg123, resampled to 44.1 kHz when it is not), decoded to
    /// the end into the renderer and rendered out, then seeked to its middle and decoded again.
    case mp3
    /// Bytes as a control connection's stream, cut into reads at the offsets the first byte picks: split into lines
    /// by the control line decoder (with a short limit, so long lines are met too), each line parsed as a request.
    case control
    /// Bytes as the app manifest (XML, binary or JSON property list).
    case manifest
    /// Bytes as a `--format` template, rendered with a full set of values.
    case template
    /// Bytes as an MPD client's stream, cut into reads as `control` is: split into lines with MPD's line limit,
    /// framed by an MPD session (command lists, idle), each command line tokenized, its arguments read as a song
    /// filter, and each argument read as every kind of MPD argument (number, range, seconds, boolean); then each
    /// batch carried out by an MPD connection's runner on a daemon core of its own (see ``mpdRunner``), stopped and
    /// emptied before each input.
    case mpd

    private static let quiet = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }

    /// Feeds `bytes` to the target. Errors are the expected outcome for most inputs and are dropped.
    func run(_ bytes: UnsafeRawBufferPointer) {
        switch self {
        case .mp3: Self.decode(bytes)
        case .control: Self.readControlStream(bytes)
        case .manifest: Self.loadManifest(bytes)
        case .template: Self.renderTemplate(bytes)
        case .mpd: Self.readMPDStream(bytes)
        }
    }

    /// A file holding the input, rewritten for each one: the decoder and the manifest loader read files. Removed
    /// when the process exits, so that replaying the corpus at every test run leaves nothing behind.
    private static let scratchFile: URL = {
        let url = URL(fileURLWithPath: "/tmp/queueplayer-fuzz-\(getpid())")
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        atexit { unlink("/tmp/queueplayer-fuzz-\(getpid())") }
        return url
    }()

    private static func writeScratch(_ bytes: UnsafeRawBufferPointer) {
        let descriptor = open(scratchFile.path, O_WRONLY | O_TRUNC)
        precondition(descriptor >= 0, "cannot write \(scratchFile.path)")
        defer { close(descriptor) }
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            precondition(written > 0, "cannot write \(scratchFile.path)")
            offset += written
        }
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer) {
        writeScratch(bytes)
        let renderer = Renderer(bufferFrames: 4096)
        do {
            let mpg123 = try MPG123Decoder(url: scratchFile, logger: quiet)
            let decoder: any AudioDecoder =
                mpg123.format.sampleRate == 44_100
                ? mpg123 : try ResampledDecoder(mpg123, outputRate: 44_100)
            try drain(decoder, through: renderer)
            try decoder.seek(toFrame: decoder.frameCount / 2)
            try drain(decoder, through: renderer)
        } catch {
            return
        }
    }

    /// Decodes to the end, writing into the ring and rendering each write out as 16-bit frames.
    private static func drain(_ decoder: any AudioDecoder, through renderer: Renderer) throws(DecoderError) {
        var output = [Int16](repeating: 0, count: 4096 * Renderer.channelCount)
        while true {
            if try decoder.write(into: renderer) == 0 { return }
            output.withUnsafeMutableBufferPointer { pointer in
                var span = pointer.mutableSpan
                _ = renderer.render(into: &span, underrun: .stopShort)
            }
        }
    }

    private static func readControlStream(_ bytes: UnsafeRawBufferPointer) {
        forEachLine(of: bytes, maximumLength: 64) { _ = ControlRequestParser.parse($0) }
    }

    /// Feeds `bytes` to a line decoder in reads of the size the first byte picks, and hands `body` each line (or
    /// over-long line) it gives.
    private static func forEachLine(
        of bytes: UnsafeRawBufferPointer, maximumLength: Int, _ body: (ControlLine) -> Void
    ) {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(ControlLineDecoder(maximumLength: maximumLength)))
        defer { _ = try? channel.finish() }
        let readSize = max(1, Int(bytes.first ?? 1))
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + readSize)
            var buffer = channel.allocator.buffer(capacity: end - offset)
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
            guard (try? channel.writeInbound(buffer)) != nil else { return }
            while let line = try? channel.readInbound(as: ControlLine.self) { body(line) }
            offset = end
        }
    }

    private static func readMPDStream(_ bytes: UnsafeRawBufferPointer) {
        _ = mpdRunner.run(lines: ["stop", "clear"], listOK: false)
        var session = MPDSession()
        forEachLine(of: bytes, maximumLength: MPDServer.maximumLineLength) { line in
            guard case .line(var buffer) = line else { return }
            let text = buffer.readString(length: buffer.readableBytes) ?? ""
            guard case .execute(let lines, _, let listOK) = session.receive(text) else { return }
            // Nothing that names a URL: the player would open it, and nothing here may reach beyond the machine.
            _ = mpdRunner.run(lines: lines.filter { !$0.contains("://") }, listOK: listOK)
            for line in lines {
                guard let request = try? MPDRequest.parse(line[...]) else { continue }
                _ = try? MPDSongFilter.parse(request.arguments, foldsCase: request.name.hasPrefix("search"))
                for argument in request.arguments {
                    _ = try? MPDArguments.range(argument, count: 5)
                    _ = try? MPDArguments.integer(argument, in: -1...100)
                    _ = try? MPDArguments.seconds(argument)
                    _ = try? MPDArguments.boolean(argument)
                }
            }
        }
    }

    /// An MPD connection's runner on a daemon core of its own: a player on a null sink, an in-memory state store, the
    /// fixtures as its music folder when the process runs where they are (the package's folder, as `scripts/fuzz`
    /// and the tests run it), stored playlists in a scratch folder removed at exit. Built once.
    private static let mpdRunner: MPDCommandRunner = {
        let application = Application()
        let player = QueuePlayer(sink: NullSink(pacing: .realTime), logger: quiet, application: application)
        // An in-memory store cannot fail to open; a fuzzer that cannot build its target has nothing to run.
        let store = try! StateStore()
        let controller = PlayerController(
            player: player, application: application, store: store, logger: quiet, commandPath: CommandPath())
        atexit { _ = try? FileManager.default.removeItem(atPath: "/tmp/queueplayer-fuzz-playlists-\(getpid())") }
        let fixtures = FileManager.default.currentDirectoryPath + "/Tests/Fixtures/generated"
        let folder = FileManager.default.fileExists(atPath: fixtures) ? fixtures : "/nonexistent"
        return MPDCommandRunner(
            controller: controller, musicFolder: MPDMusicFolder(path: folder),
            playlists: MPDStoredPlaylists(folder: "/tmp/queueplayer-fuzz-playlists-\(getpid())"),
            versions: MPDQueueVersions(), feed: MPDChangeFeed(), isLocalClient: false)
    }()

    private static func loadManifest(_ bytes: UnsafeRawBufferPointer) {
        writeScratch(bytes)
        _ = try? AppManifest.load(from: scratchFile, logger: quiet)
    }

    private static let templateValues: [String: MetadataTemplate.Value] = [
        "title": .string("Morning"), "artist": .string("Zoë"), "album": .string("Days"), "status": .string("Playing"),
        "position": .integer(61_500_000), "mpris:length": .integer(183_000_000), "volume": .number(0.5),
        "playerName": .string("queueplayer"), "playerInstance": .string("queueplayer"),
        "xesam:url": .string("file:///music/01-morning.mp3"),
    ]

    private static func renderTemplate(_ bytes: UnsafeRawBufferPointer) {
        let text = String(decoding: bytes, as: UTF8.self)
        _ = try? MetadataTemplate(text: text).render(templateValues)
    }
}

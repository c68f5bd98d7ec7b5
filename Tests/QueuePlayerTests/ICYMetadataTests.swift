import Foundation
import NIOCore
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// `stream` split by a demultiplexer of `interval`, fed in chunks of `chunk` bytes: its audio and its blocks.
private func demultiplexed(
    _ stream: [UInt8], interval: Int, chunk: Int
) -> (audio: [UInt8], blocks: [ICYDemultiplexer.Block]) {
    var demultiplexer = ICYDemultiplexer(interval: interval)
    var audio: [UInt8] = []
    var blocks: [ICYDemultiplexer.Block] = []
    for start in stride(from: 0, to: stream.count, by: chunk) {
        let (pieces, found) = demultiplexer.split(ByteBuffer(bytes: stream[start..<min(start + chunk, stream.count)]))
        audio += pieces.flatMap { Array($0.readableBytesView) }
        blocks += found
    }
    return (audio, blocks)
}

@Suite("ICY metadata: stream titles taken out of the audio and told when heard", .tier(.deterministic))
struct ICYMetadataTests {
    @Test("blocks split across chunks come out whole, at their audio offsets, and the audio comes out alone")
    func demultiplexing() {
        let title = Array("StreamTitle='A';".utf8)
        let block = [UInt8(1)] + title
        let stream =
            Array(repeating: UInt8(7), count: 10) + block + Array(repeating: 8, count: 10) + [0]
            + Array(repeating: 9, count: 4)
        let (audio, blocks) = demultiplexed(stream, interval: 10, chunk: 3)
        #expect(
            audio == Array(repeating: 7, count: 10) + Array(repeating: 8, count: 10) + Array(repeating: 9, count: 4))
        #expect(blocks == [ICYDemultiplexer.Block(audioOffset: 10, bytes: title)])
    }

    @Test("a title in UTF-8 stays as it is; one in windows-1252 or Latin-1 is converted, never garbled")
    func titleText() {
        func block(_ bytes: [UInt8]) -> [UInt8] { Array("StreamTitle='".utf8) + bytes + Array("';StreamUrl='';".utf8) }
        #expect(ICYDemultiplexer.streamTitle(in: block(Array("Zoë – It's “One”".utf8))) == "Zoë – It's “One”")
        #expect(
            ICYDemultiplexer.streamTitle(in: block([0x43, 0x61, 0x66, 0xE9, 0x20, 0x93, 0x32, 0x94])) == "Café “2”")
        #expect(ICYDemultiplexer.streamTitle(in: block([0x4D, 0xFC, 0x6E, 0x63, 0x68, 0x65, 0x6E])) == "München")
        #expect(ICYDemultiplexer.streamTitle(in: Array("StreamUrl='x';".utf8)) == nil)
    }

    @Test("the largest block (255 × 16 bytes) comes out whole across many chunks, and the audio around it intact")
    func largestBlock() {
        let title = Array(repeating: UInt8(ascii: "x"), count: 4_000)
        var text = Array("StreamTitle='".utf8) + title + Array("';".utf8)
        text += [UInt8](repeating: 0, count: 255 * 16 - text.count)
        let stream = Array(repeating: UInt8(7), count: 64) + [255] + text + Array(repeating: 8, count: 64)
        let (audio, blocks) = demultiplexed(stream, interval: 64, chunk: 100)
        #expect(audio == Array(repeating: 7, count: 64) + Array(repeating: 8, count: 64))
        #expect(blocks.count == 1 && blocks.first?.bytes.count == 255 * 16)
        let told = blocks.first.flatMap { ICYDemultiplexer.streamTitle(in: $0.bytes) }
        #expect(told == String(decoding: title, as: UTF8.self))
    }

    @Test("malformed blocks give no title or the text they hold, never a crash or the next field")
    func malformedBlocks() {
        let cases: [(String, String?)] = [
            ("StreamTitle='unterminated", "unterminated"),
            ("StreamTitle='A';StreamUrl='http://x';", "A"),
            ("StreamTitle=A;", nil),
            ("streamtitle='lower';", nil),
            ("", nil),
        ]
        for (text, title) in cases {
            #expect(ICYDemultiplexer.streamTitle(in: Array(text.utf8)) == title, "\(text)")
        }
        let garbage: [UInt8] = [0xFF, 0xFE, 0x00, 0x27, 0x3B] + Array("StreamTitle='".utf8) + [0xFF, 0x80, 0x27, 0x3B]
        #expect(ICYDemultiplexer.streamTitle(in: garbage) == "ÿ€")
    }
}

/// On a stepped sink: audio time moves only as the test renders, and stands still while the test waits for a title,
/// so the time read when it is told is the engine's doing, whatever else loads the machine.
@Suite("ICY metadata: titles told when heard", .tier(.deterministic), .timeLimit(.minutes(1)))
struct ICYTitleTimingTests {
    @Test("each title is told as the audio after it is heard, not as it arrives, and becomes the item's title")
    func toldWhenHeard() async throws {
        var station = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("sweep-44k-4s"))))
        station.isLive = true
        station.icyInterval = 16_000
        station.icyTitles = [1: Array("Zoë – One".utf8), 3: [0x43, 0x61, 0x66, 0xE9, 0x20, 0x93, 0x32, 0x94]]
        station.icyName = Array("QP Radio".utf8)
        let server = try await HTTPTestServer(routes: ["/radio.mp3": station])
        let item = PlayerItem(url: server.url("/radio.mp3"))
        let sink = SteppedSink()
        let player = QueuePlayer(items: [item], sink: sink, logger: quietLogger)
        // Each notification's time is read inside its observer call: the player's time when it was made.
        let (toldStream, tell) = AsyncStream.makeStream(of: (title: String?, station: String?, at: Double).self)
        let token = player.addNotificationObserver(queue: DispatchQueue(label: "titles")) { notification in
            guard case .timedMetadata(let changed, let metadata) = notification, changed === item else { return }
            tell.yield((metadata.title, metadata.stationName, player.currentTime().seconds))
        }
        player.play()
        // 192 kbps after a 626-byte info frame: the MPEG frame starting at or after byte 16,000 is the 25th, whose
        // first sample, less the 1,105 frames of encoder delay, is heard at 0.628 s; after byte 48,000, 1.960 s. The
        // whole stream arrives long before either is heard. Audio is rendered up to 50 ms before each, then to 20 ms
        // after it, where time stands while the title is awaited: a title told early would read the first.
        var rendered = 0
        func render(until seconds: Double) throws {
            let frames = Int(seconds * 44_100) - rendered
            try sink.render(frames: frames, deadline: .now() + 10) { _, _ in }
            rendered += frames
        }
        var told: [(title: String?, station: String?, at: Double)] = []
        var titles = toldStream.makeAsyncIterator()
        for heard in [0.628, 1.960] {
            try render(until: heard - 0.05)
            try render(until: heard + 0.02)
            if let title = await titles.next() { told.append(title) }
        }
        player.removeObserver(token)
        player.pause()
        try await server.stop()
        #expect(told.map(\.title) == ["Zoë – One", "Café “2”"])
        #expect(told.map(\.station) == ["QP Radio", "QP Radio"])
        let times = told.map(\.at)
        #expect(times.count == 2 && abs(times[0] - 0.628) < 0.04 && abs(times[1] - 1.960) < 0.04, "\(times)")
        #expect(item.metadata.title == "Café “2”")
    }
}

import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// `QueuePlayer.replayGainMode`: the gains of an item's ReplayGain tags, applied by libmpg123 as mpg123's own
/// `--rva-mix` and `--rva-album` apply them, and a change heard in the current item once what was decoded ahead of it
/// has played.
@Suite("QueuePlayer: ReplayGain", .tier(.deterministic), .timeLimit(.minutes(1)))
struct ReplayGainTests {
    /// The largest magnitude among `samples`.
    private func peak(_ samples: [Float]) -> Float { samples.map(abs).max() ?? 0 }

    private func decoded(_ name: String, gain: AppliedReplayGain) throws -> [Float] {
        let decoder = try MPG123Decoder(url: Fixtures.mp3(name), logger: quietLogger)
        decoder.applyReplayGain(gain)
        let (samples, error) = decodeAll(decoder)
        #expect(error == nil)
        return samples
    }

    @Test(
        "off, track and album gain decode sample for sample as mpg123 without RVA, with --rva-mix and --rva-album",
        arguments: ["replaygain", "replaygain-loud"])
    func matchesMPG123(name: String) throws {
        #expect(sampleDifference(try decoded(name, gain: .none), try Fixtures.referenceFloat(name)) == nil)
        #expect(sampleDifference(try decoded(name, gain: .track), try Fixtures.referenceFloat("\(name).track")) == nil)
        #expect(sampleDifference(try decoded(name, gain: .album), try Fixtures.referenceFloat("\(name).album")) == nil)
    }

    @Test("the tags' -3.5 dB and -9 dB are what is heard; +12 dB is held at the 0.8 peak's limit, 1.25 times")
    func gainsHeard() throws {
        let plain = peak(try decoded("replaygain", gain: .none))
        let track = peak(try decoded("replaygain", gain: .track))
        let album = peak(try decoded("replaygain", gain: .album))
        #expect(abs(track / plain - pow(10, -3.5 / 20)) < 0.001, "track: \(track / plain)")
        #expect(abs(album / plain - pow(10, -9.0 / 20)) < 0.001, "album: \(album / plain)")
        let loud = peak(try decoded("replaygain-loud", gain: .track))
        #expect(abs(loud / plain - 1.25) < 0.001, "loud: \(loud / plain)")
    }

    @Test("auto is album gain in order and track gain shuffled; off is none")
    func autoMode() {
        #expect(QueuePlayer.ReplayGainMode.auto.applied(shuffleMode: .off) == .album)
        #expect(QueuePlayer.ReplayGainMode.auto.applied(shuffleMode: .items) == .track)
        #expect(QueuePlayer.ReplayGainMode.off.applied(shuffleMode: .items) == .none)
    }

    /// The ring the engine decodes ahead into holds 32,768 frames, written 4,096 at a time, and libmpg123 hands out
    /// an MPEG frame (1,152) decoded at the gain of its time: the switch comes within those after the change.
    @Test("a change while playing is heard in the current item once what was decoded ahead has played")
    func changeWhilePlaying() throws {
        let sink = SteppedSink()
        let player = QueuePlayer(items: [PlayerItem(url: Fixtures.mp3("replaygain"))], sink: sink, logger: quietLogger)
        #expect(player.replayGainMode == .off)
        player.play()
        var heard = try sink.renderAll(frames: 44_100)
        player.replayGainMode = .track
        #expect(player.replayGainMode == .track)
        heard += try sink.renderAll(frames: 220_500 - 44_100)
        let plain = try Fixtures.referenceFloat("replaygain")
        let track = try Fixtures.referenceFloat("replaygain.track")
        let switchSample = try #require((0..<heard.count).first { heard[$0] != plain[$0] }, "the gain never changed")
        let switchFrame = switchSample / 2
        #expect((44_100...(44_100 + 32_768 + 4_096 + 1_152)).contains(switchFrame), "switched at frame \(switchFrame)")
        #expect(sampleDifference(Array(heard[switchSample...]), Array(track[switchSample...])) == nil)
    }
}

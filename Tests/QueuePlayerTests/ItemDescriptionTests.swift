import Foundation
import QueuePlayer
import TestSupport
import TestTiers
import Testing

/// `PlayerItem.describe`: a file's exact length and every tag a music library shows, read without playing it, as
/// `mpg123 -w` decodes it and as its tags were written (scripts/make-fixtures).
@Suite("Describing a file without playing it", .tier(.deterministic))
struct ItemDescriptionTests {
    @Test("the length is the reference decode's to the frame, with or without a LAME header (then from a scan)")
    func exactLength() throws {
        for name in ["stereo-44k-5s", "vbr-no-header", "mpeg2-22k"] {
            let description = try PlayerItem.describe(Fixtures.mp3(name))
            let reference = try Fixtures.referenceFloat(name)
            #expect(description.frameCount * 2 == reference.count, "\(name)")
            let seconds = Double(description.frameCount) / Double(description.format.sampleRate)
            #expect(description.duration.seconds == seconds)
        }
        #expect(try PlayerItem.describe(Fixtures.mp3("mpeg2-22k")).format == .stereo(sampleRate: 22_050))
    }

    @Test("ID3v2.4 gives every tag; a number in parentheses in an ID3v2.3 genre names an ID3v1 genre")
    func everyTag() throws {
        let v24 = try PlayerItem.describe(Fixtures.mp3("tagged-v24")).metadata
        var expected = ItemMetadata(title: "First Light", artists: ["Ana Ñúñez"], album: "Mornings")
        expected.albumArtist = "Various"
        expected.track = "1/2"
        expected.disc = "1/1"
        expected.date = "2019-05-04"
        expected.genre = "Jazz"
        expected.composer = "Clara Wieck"
        #expect(v24 == expected)

        let v23 = try PlayerItem.describe(Fixtures.mp3("tagged-v23")).metadata
        #expect(v23.artists == ["Bo Li 李"] && v23.title == "Second Light" && v23.track == "2/2")
        #expect(v23.date == "2019", "ID3v2.3's year")
        #expect(v23.genre == "Rock", "(17)")
    }

    @Test("ID3v1.1 gives its year, track number and genre")
    func id3v1() throws {
        let metadata = try PlayerItem.describe(Fixtures.mp3("id3v1-full")).metadata
        #expect(metadata.title == "Plain" && metadata.artists == ["Old Artist"] && metadata.album == "Old Album")
        #expect(metadata.date == "1999" && metadata.track == "7" && metadata.genre == "Rock")
    }

    @Test("the pictures of a tag: the cover of 20,000 bytes as written, with its type and kind; none without")
    func pictures() throws {
        let cover = try [UInt8](Data(contentsOf: Fixtures.directory.appendingPathComponent("cover.bin")))
        #expect(
            try PlayerItem.pictures(in: Fixtures.mp3("tagged-v24"))
                == [ItemPicture(kind: ItemPicture.frontCoverKind, mimeType: "image/png", bytes: cover)])
        #expect(try PlayerItem.pictures(in: Fixtures.mp3("tagged-v23")).isEmpty)
    }

    @Test("comments are the tag's user-defined text frames, in the tag's order; a tag without them has none")
    func comments() throws {
        #expect(
            try PlayerItem.comments(in: Fixtures.mp3("replaygain")) == [
                ItemComment(key: "replaygain_track_gain", value: "-3.50 dB"),
                ItemComment(key: "replaygain_album_gain", value: "-9.00 dB"),
                ItemComment(key: "replaygain_track_peak", value: "0.700000"),
                ItemComment(key: "replaygain_album_peak", value: "0.700000"),
            ])
        #expect(try PlayerItem.comments(in: Fixtures.mp3("tagged-v24")).isEmpty)
        #expect(throws: DecoderError.self) { try PlayerItem.comments(in: Fixtures.mp3("not-audio")) }
        #expect(throws: DecoderError.self) { try PlayerItem.comments(in: URL(string: "http://127.0.0.1:9/a.mp3")!) }
    }

    @Test("a file that is not MP3, and a URL, are refused naming them")
    func refusals() {
        let notAudio = #expect(throws: DecoderError.self) { try PlayerItem.describe(Fixtures.mp3("not-audio")) }
        #expect(notAudio?.code == .notMPEGAudio && notAudio?.description.contains("not-audio.mp3") == true)
        let remote = #expect(throws: DecoderError.self) {
            try PlayerItem.describe(URL(string: "http://127.0.0.1:9/episode.mp3")!)
        }
        #expect(remote?.description.contains("http://127.0.0.1:9/episode.mp3") == true)
        #expect(throws: DecoderError.self) { try PlayerItem.pictures(in: Fixtures.mp3("does-not-exist")) }
    }
}

import Foundation
import QueuePlayerService
import TestTiers
import Testing

/// Playlists as stations and collections hand them out: M3U, M3U8 and PLS.
@Suite("Playlists", .tier(.deterministic))
struct PlaylistTests {
    let folder = URL(fileURLWithPath: "/music/lists")

    func m3u(_ text: String) throws(Playlist.Failure) -> [String] {
        try Playlist.entries(in: text, format: .m3u, relativeTo: folder, path: "/music/lists/a.m3u").map(\.description)
    }

    @Test("M3U: comments and #EXTINF skipped; relative, absolute, file:// and network entries in order; CRLF")
    func m3uEntries() throws {
        let text =
            "\u{FEFF}#EXTM3U\r\n#EXTINF:123,Artist - Title\r\n01 first.mp3\r\n\r\n  ../other/second.mp3  \r\n"
            + "/srv/third.mp3\r\nfile:///srv/fourth%20one.mp3\r\n# a comment\r\nhttp://radio.example/stream\r\n"
        let entries = try m3u(text)
        #expect(
            entries == [
                "file:///music/lists/01%20first.mp3", "file:///music/other/second.mp3", "file:///srv/third.mp3",
                "file:///srv/fourth%20one.mp3", "http://radio.example/stream",
            ], "\(entries)")
    }

    @Test("PLS: File entries in the order of their numbers, whatever the order of the lines; other keys ignored")
    func plsEntries() throws {
        let text = """
            [playlist]
            NumberOfEntries=3
            File10=tenth.mp3
            Title1=The first
            file2=https://radio.example/b
            File1=first.mp3
            Length1=-1
            Version=2
            """
        let entries = try Playlist.entries(in: text, format: .pls, relativeTo: folder, path: "/music/lists/a.pls")
        #expect(
            entries.map(\.description) == [
                "file:///music/lists/first.mp3", "https://radio.example/b", "file:///music/lists/tenth.mp3",
            ])
    }

    @Test("an HLS playlist is refused, naming the file and what to give instead")
    func hlsRefused() {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nsegment1.ts\n"
        #expect {
            try m3u(text)
        } throws: { error in
            let failure = error as? Playlist.Failure
            return failure?.path == "/music/lists/a.m3u" && failure?.reason.contains("HLS") == true
                && failure?.reason.contains("direct MP3 stream") == true
        }
    }

    @Test("a playlist that lists nothing is an error naming it and what it should hold")
    func emptyRefused() {
        #expect(throws: Playlist.Failure.self) { try m3u("#EXTM3U\n# nothing here\n") }
        #expect {
            try Playlist.entries(in: "[playlist]\nNumberOfEntries=0\n", format: .pls, relativeTo: folder, path: "p.pls")
        } throws: { error in
            let expected = "p.pls: lists nothing to play; expected File1=, File2=, … entries"
            return (error as? Playlist.Failure)?.description == expected
        }
    }

    @Test("a Latin-1 .m3u keeps its accented names; the format comes from the extension, in any case")
    func latin1AndFormats() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("qp-\(UUID().uuidString).M3U")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data([0x63, 0x61, 0x66, 0xE9, 0x2E, 0x6D, 0x70, 0x33, 0x0A]).write(to: file)  // "café.mp3" in Latin-1
        let entries = try Playlist.entries(ofFileAt: file.path)
        #expect(entries.map(\.lastPathComponent) == ["café.mp3"])
        #expect(Playlist.format(ofPath: "a.m3u8") == .m3u && Playlist.format(ofPath: "B.PLS") == .pls)
        #expect(Playlist.format(ofPath: "a.mp3") == nil)
        #expect(throws: Playlist.Failure.self) { try Playlist.entries(ofFileAt: "/nonexistent/list.m3u") }
    }
}

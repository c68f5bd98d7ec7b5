import Foundation
import QueuePlayer
import QueuePlayerService
import TestSupport
import TestTiers
import Testing

/// URLs whose path does not say what they are, as stations hand them out: the server's content type decides. An
/// HTTP server of this process, on loopback.
@Suite("Remote items told by their content type", .tier(.deterministic), .timeLimit(.minutes(1)))
struct RemotePlaylistTests {
    @Test("each content type is told apart: playlists, HLS, other audio by name, feeds, text, and MP3 or unknown")
    func contentTypes() {
        let kinds: [(String, ContentType)] = [
            ("audio/x-mpegurl", .playlist), ("audio/mpegurl", .playlist), ("application/x-mpegURL", .playlist),
            ("audio/x-scpls", .playlist), ("application/pls+xml", .playlist),
            ("application/vnd.apple.mpegurl", .hls), ("audio/aacp", .otherAudio("AAC")),
            ("audio/aac", .otherAudio("AAC")), ("audio/mp4", .otherAudio("AAC")),
            ("application/ogg", .otherAudio("Ogg")), ("audio/ogg; codecs=opus", .otherAudio("Ogg")),
            ("audio/opus", .otherAudio("Opus")), ("audio/flac", .otherAudio("FLAC")),
            ("text/html; charset=utf-8", .text), ("application/json", .text), ("audio/mpeg", .playable),
            ("application/octet-stream", .playable), ("application/rss+xml; charset=utf-8", .feed),
            ("application/atom+xml", .feed), ("text/xml", .feed),
        ]
        for (type, kind) in kinds { #expect(ContentType(type) == kind, "\(type)") }
        #expect(Playlist.format(ofContentType: "audio/x-scpls") == .pls)
        #expect(Playlist.format(ofContentType: "audio/mpegurl") == .m3u)
        #expect(Playlist.format(ofContentType: "audio/mpeg") == nil)
    }

    @Test("a tune-in link served as a playlist is expanded; other formats are refused by name; MP3 stays an item")
    func expandedByContentType() async throws {
        func route(_ type: String, _ body: String) -> HTTPTestServer.Route {
            HTTPTestServer.Route(text: body, contentType: type)
        }
        let server = try await HTTPTestServer(routes: [
            "/tune": route("audio/x-scpls", "[playlist]\nFile1=/a.mp3\nFile2=/b\n"),
            "/listen": route("audio/mpegurl", "#EXTM3U\n/c.mp3\n"),
            "/pls-xml": route("application/pls+xml", "[playlist]\nFile1=/d.mp3\n"),
            "/b": route("audio/mpeg", "not decoded here"),
            "/hls": route("application/vnd.apple.mpegurl", "#EXTM3U\n#EXT-X-TARGETDURATION:10\nsegment.ts\n"),
            "/aac": route("audio/aacp", ""),
            "/ogg": route("application/ogg", ""),
        ])
        let expansion = ItemPaths.expand(
            ["/tune", "/listen", "/pls-xml", "/hls", "/aac", "/ogg"].map { server.url($0).absoluteString })
        #expect(expansion.files == ["/a.mp3", "/b", "/c.mp3", "/d.mp3"].map { server.url($0) })
        let problems = expansion.problems
        #expect(problems.count == 3, "\(problems)")
        #expect(problems.contains { $0.hasPrefix(server.url("/hls").absoluteString) && $0.contains("HLS") })
        #expect(problems.contains { $0.hasPrefix(server.url("/aac").absoluteString) && $0.contains("AAC audio") })
        #expect(problems.contains { $0.hasPrefix(server.url("/ogg").absoluteString) && $0.contains("MP3 stream") })
        // Only the URLs that did not say what they are were looked at: never the .mp3 entries.
        #expect(!server.requests.map(\.path).contains { $0.hasSuffix(".mp3") }, "\(server.requests.map(\.path))")
        try await server.stop()
    }
}

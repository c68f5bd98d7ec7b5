import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayerService

/// Podcast feeds, RSS 2.0 and Atom, read with libxml2; and `add` of a feed's URL, from an HTTP server of this
/// process.
@Suite("Podcast feeds", .tier(.deterministic), .timeLimit(.minutes(1)))
struct FeedTests {
    let base = URL(string: "https://podcast.example/show/feed.rss")!

    static let rss = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
          <channel>
            <title>Café Physique</title>
            <item><title>Episode 1: Zoë’s “start”</title><pubDate>Mon, 02 Jan 2023 08:00:00 GMT</pubDate>
              <enclosure url="https://cdn.example/1.mp3" type="audio/mpeg" length="1000"/></item>
            <item><title>Episode 3</title><pubDate>Thu, 02 Mar 2023 10:00:00 +0100</pubDate>
              <itunes:duration>1:02:03</itunes:duration>
              <enclosure url="episodes/3.mp3" type="audio/mpeg" length="1000"/></item>
            <item><title>Episode 2 (AAC)</title><pubDate>Thu, 02 Feb 2023 08:00:00 GMT</pubDate>
              <enclosure url="https://cdn.example/2.m4a" type="audio/x-m4a" length="1000"/></item>
            <item><title>Episode 2</title><pubDate>Wed, 01 Feb 2023 08:00:00 GMT</pubDate>
              <itunes:duration>1830</itunes:duration>
              <enclosure url="https://cdn.example/2.mp3" type="audio/mpeg" length="1000"/></item>
          </channel>
        </rss>
        """

    @Test("RSS: the show's name, MP3 episodes newest first, relative enclosures resolved, other formats left out")
    func rss() throws {
        let feed = try FeedReader.feed(in: Array(Self.rss.utf8), location: base)
        #expect(feed.show == "Café Physique")
        #expect(
            feed.episodes.map(\.url.absoluteString) == [
                "https://podcast.example/show/episodes/3.mp3", "https://cdn.example/2.mp3", "https://cdn.example/1.mp3",
            ])
        #expect(feed.episodes.last?.title == "Episode 1: Zoë’s “start”")
        #expect(feed.episodes.first?.published == Date(timeIntervalSince1970: 1_677_747_600))
        #expect(feed.episodes.map(\.duration) == [3_723, 1_830, nil])
    }

    @Test("itunes:duration in seconds or clock time; anything else is no length")
    func durations() {
        let lengths: [(String, Double?)] = [
            ("3600", 3_600), (" 59:30 ", 3_570), ("1:02:03", 3_723), ("00:00:07.5", 7.5), ("90:00", 5_400),
            ("", nil), ("0", nil), ("-5", nil), ("1:60", nil), ("1:2:3:4", nil), ("an hour", nil), ("12::30", nil),
        ]
        for (text, seconds) in lengths {
            #expect(FeedDuration.parse(text) == seconds, "'\(text)'")
        }
    }

    @Test("Atom: enclosure links, published dates, the feed's own title")
    func atom() throws {
        let atom = """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>Radio Hour</title>
              <entry><title>Older</title><published>2024-05-01T10:00:00Z</published>
                <link rel="alternate" href="https://radio.example/older"/>
                <link rel="enclosure" type="audio/mpeg" href="https://radio.example/older.mp3"/></entry>
              <entry><title>Newer</title><updated>2024-06-01T10:00:00Z</updated>
                <link rel="enclosure" type="audio/mpeg" href="https://radio.example/newer.mp3"/></entry>
            </feed>
            """
        let feed = try FeedReader.feed(in: Array(atom.utf8), location: base)
        #expect(feed.show == "Radio Hour")
        #expect(feed.episodes.map(\.title) == ["Newer", "Older"])
    }

    @Test("a feed without MP3 episodes, a document that is not well-formed, and XML that is no feed fail, named")
    func failures() {
        let cases: [(String, String)] = [
            (
                "<rss><channel><item><enclosure url=\"a.m4a\" type=\"audio/x-m4a\"/></item></channel></rss>",
                "no MP3 episodes (its enclosures are audio/x-m4a)"
            ),
            ("<rss><channel><item><title>Broken</item></channel>", "not well-formed XML"),
            ("<html><body>Not a feed</body></html>", "not a podcast feed"),
        ]
        for (text, reason) in cases {
            #expect {
                try FeedReader.feed(in: Array(text.utf8), location: base)
            } throws: { error in
                let failure = error as? Feed.Failure
                return failure?.location == base.absoluteString && failure?.reason.contains(reason) == true
            }
        }
        #expect(FeedReader.isFeed(Array(Self.rss.utf8)))
        #expect(!FeedReader.isFeed(Array("<html/>".utf8)))
    }

    @Test("`add` of a feed's URL queues its MP3 episodes newest first; XML that is no feed is refused by name")
    func addFeed() async throws {
        func route(_ type: String, _ body: String) -> HTTPTestServer.Route {
            HTTPTestServer.Route(text: body, contentType: type)
        }
        let server = try await HTTPTestServer(routes: [
            "/feed.rss": route("application/rss+xml; charset=utf-8", Self.rss),
            "/page": route("text/xml", "<html><body>Not a feed</body></html>"),
        ])
        let feed = ItemPaths.expand([server.url("/feed.rss").absoluteString])
        #expect(feed.problems.isEmpty, "\(feed.problems)")
        #expect(feed.files.map(\.lastPathComponent) == ["3.mp3", "2.mp3", "1.mp3"])
        let page = ItemPaths.expand([server.url("/page").absoluteString])
        #expect(page.files.isEmpty)
        #expect(page.problems.first?.contains("not a podcast feed") == true, "\(page.problems)")
        try await server.stop()
    }

    @Test("episodes added from a feed are named as it names them, after a restart too; --unplayed leaves out played")
    func episodeDetailsAndUnplayed() async throws {
        let episode = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("join-1"))))
        let server = try await HTTPTestServer(routes: [
            "/feed.rss": HTTPTestServer.Route(text: Self.rss, contentType: "application/rss+xml"),
            "/episodes/3.mp3": episode,
        ])
        let feed = server.url("/feed.rss").absoluteString
        let store = try StateStore()
        let service = try ServiceHarness(store: store)
        #expect(service.run(.add([feed])).added?.count == 3)
        let shown = try #require(service.status.current)
        #expect(shown.url == server.url("/episodes/3.mp3").absoluteString)
        #expect(shown.title == "Episode 3" && shown.album == "Café Physique", "\(shown)")
        #expect(shown.published == "2023-03-02", "\(shown)")
        #expect(shown.length == 3_723, "not opened yet, it is as long as its feed says: \(shown)")

        // Queued again in a later run, by its URL alone: still named as the feed named it.
        service.run(.clear)
        try store.saveEpisodePosition(.init(seconds: 0, isPlayed: true), of: "https://cdn.example/2.mp3")
        let later = try ServiceHarness(store: store)
        #expect(later.run(.add([server.url("/episodes/3.mp3").absoluteString])).added?.count == 1)
        #expect(later.status.current?.title == "Episode 3")
        later.run(.clear)

        #expect(later.run(.add([feed], unplayed: true)).added?.count == 2)
        #expect(later.player.entries().map(\.location).contains("https://cdn.example/2.mp3") == false)
        later.run(.clear)
        for url in ["https://cdn.example/1.mp3", server.url("/episodes/3.mp3").absoluteString] {
            try store.saveEpisodePosition(.init(seconds: 0, isPlayed: true), of: url)
        }
        let refused = later.run(.add([feed], unplayed: true))
        #expect(refused.ok != true && refused.error?.contains("has been played") == true, "\(refused)")
        #expect(later.player.entries().isEmpty)

        // What is kept to be shown is what the queue holds: the feed's other episodes were let go.
        let third = server.url("/episodes/3.mp3").absoluteString
        #expect(later.run(.add([third])).added?.count == 1)
        #expect(later.controller.state.withLock { Array($0.episodeDetails.keys) } == [third])

        // A store that cannot say what was played refuses --unplayed, naming itself, and queues nothing.
        try await store.database.write { try $0.execute(sql: "DROP TABLE episode") }
        let unreadable = later.run(.add([feed], unplayed: true))
        #expect(
            unreadable.error?.contains("cannot read which episodes were played from memory") == true, "\(unreadable)")
        #expect(later.player.entries().map(\.location) == [third])
        try await server.stop()
    }
}

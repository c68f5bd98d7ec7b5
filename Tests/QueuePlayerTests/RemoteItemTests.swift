import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// A server on loopback serving fixtures by their file names ("/sweep-44k-4s.mp3"), each route as `adjust` makes it.
private func serving(
    _ names: [String], adjust: (inout HTTPTestServer.Route) -> Void = { _ in }
) async throws -> HTTPTestServer {
    var routes: [String: HTTPTestServer.Route] = [:]
    for name in names {
        var route = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3(name))))
        adjust(&route)
        routes["/\(name).mp3"] = route
    }
    return try await HTTPTestServer(routes: routes)
}

@Suite("Items fetched over HTTP", .tier(.deterministic), .timeLimit(.minutes(1)))
struct RemoteItemTests {
    @Test("a remote file plays bit for bit as the local file does, gapless, and joins the next item")
    func playsAsTheFileDoes() async throws {
        let server = try await serving(["join-1", "join-2"])
        let (events, samples) = try await playOnNullSink([server.url("/join-1.mp3"), server.url("/join-2.mp3")])
        try await server.stop()
        #expect(eventNames(events) == ["start join-1", "end join-1", "start join-2", "end join-2", "queue end"])
        if case .itemStarted(let first) = events.first(where: { if case .itemStarted = $0 { true } else { false } }) {
            #expect(first.frameCount == 66_150)
            #expect(first.entry.url == server.url("/join-1.mp3"))
        }
        let reference = try ["join-1", "join-2"].flatMap { try Fixtures.referenceFloat($0) }
        #expect(sampleDifference(samples, reference) == nil)
    }

    @Test("a remote URL inserted into the queue is fetched from its server, not taken for a file")
    func insertedRemoteItem() async throws {
        let server = try await serving(["join-2"])
        let engine = queued([Fixtures.mp3("join-1")], on: NullSink(pacing: .unpaced))
        let inserted = engine.insert([server.url("/join-2.mp3")], after: engine.queue().first)
        #expect(inserted.map(\.location) == [server.url("/join-2.mp3").absoluteString])
        var iterator = engine.events.makeAsyncIterator()
        engine.play()
        var heard: [String] = []
        while let name = await nextHeard(&iterator) {
            heard.append(name)
            if name == "queue end" { break }
        }
        #expect(heard == ["start join-1", "end join-1", "start join-2", "end join-2", "queue end"])
        engine.shutdown()
        try await server.stop()
    }

    @Test("a connection dropped twice resumes with a Range request at the next byte: nothing lost or repeated")
    func dropsResumeWithRanges() async throws {
        let server = try await serving(["sweep-44k-4s"]) { $0.dropsAfterBytes = [20_000, 30_000] }
        let (events, samples) = try await playOnNullSink([server.url("/sweep-44k-4s.mp3")])
        try await server.stop()
        #expect(eventNames(events) == ["start sweep-44k-4s", "end sweep-44k-4s", "queue end"])
        #expect(sampleDifference(samples, try Fixtures.referenceFloat("sweep-44k-4s")) == nil)
        #expect(server.requests.map(\.range) == [nil, "bytes=20000-", "bytes=50000-"])
    }

    @Test("from a server that ignores ranges, a dropped file resumes by skipping what it already had")
    func dropsResumeWithoutRanges() async throws {
        let server = try await serving(["sweep-44k-4s"]) {
            $0.acceptsRanges = false
            $0.dropsAfterBytes = [40_000]
        }
        let (events, samples) = try await playOnNullSink([server.url("/sweep-44k-4s.mp3")])
        try await server.stop()
        #expect(eventNames(events) == ["start sweep-44k-4s", "end sweep-44k-4s", "queue end"])
        #expect(sampleDifference(samples, try Fixtures.referenceFloat("sweep-44k-4s")) == nil)
        #expect(server.requests.count == 2)
    }

    @Test("a server gone silent mid-file is asked again after the 10 s read timeout, by range: nothing lost")
    func silentServerResumes() async throws {
        let server = try await serving(["join-1"]) { $0.silentAfterBytes = [20_000] }
        let (events, samples) = try await playOnNullSink([server.url("/join-1.mp3")])
        try await server.stop()
        #expect(eventNames(events) == ["start join-1", "end join-1", "queue end"])
        #expect(server.requests.map(\.range) == [nil, "bytes=20000-"])
        #expect(sampleDifference(samples, try Fixtures.referenceFloat("join-1")) == nil)
    }

    @Test("a connection reset mid-file, twice, resumes by range each time: nothing lost or repeated")
    func resetConnectionResumes() async throws {
        let server = try await serving(["sweep-44k-4s"]) { $0.resetsAfterBytes = [20_000, 30_000] }
        let (events, samples) = try await playOnNullSink([server.url("/sweep-44k-4s.mp3")])
        try await server.stop()
        #expect(eventNames(events) == ["start sweep-44k-4s", "end sweep-44k-4s", "queue end"])
        #expect(server.requests.map(\.range) == [nil, "bytes=20000-", "bytes=50000-"])
        #expect(sampleDifference(samples, try Fixtures.referenceFloat("sweep-44k-4s")) == nil)
    }

    @Test("a station whose icy-metaint lies plays on through the damage, telling no title made of its audio bytes")
    func wrongMetadataInterval() async throws {
        var station = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("join-1"))))
        station.isLive = true
        station.icyInterval = 8_000
        station.icyIntervalHeader = 16_000
        station.icyTitles = [1: Array("Real".utf8), 2: Array("Real".utf8), 3: Array("Real".utf8)]
        let server = try await HTTPTestServer(routes: ["/live": station])
        let live = PlayerItem(url: server.url("/live"))
        let player = QueuePlayer(items: [live], sink: NullSink(pacing: .unpaced), logger: quietLogger)
        var events = player.playbackEvents().makeAsyncIterator()
        player.play()
        // The first body heard to its end: its sound goes on after the gap of the reconnection.
        var told: [PlaybackEvent] = []
        while let event = await events.next() {
            told.append(event)
            if case .liveGap = event { break }
        }
        player.pause()
        try await server.stop()
        #expect(told.contains { if case .itemStarted = $0 { true } else { false } }, "\(told)")
        #expect(!told.contains { if case .itemFailed = $0 { true } else { false } }, "\(told)")
        // A title is told only when a block the demultiplexer took holds one whole: the station's own, met by chance.
        let titles = told.compactMap { event -> String? in
            if case .metadataChanged(_, let metadata) = event { metadata.title ?? "none" } else { nil }
        }
        #expect(titles.allSatisfy { $0 == "Real" }, "\(titles)")
        #expect(live.status == .readyToPlay)
    }

    @Test("a remote file without a LAME header plays whole, its length estimated from its size")
    func withoutHeader() async throws {
        let server = try await serving(["vbr-no-header"])
        let (events, samples) = try await playOnNullSink([server.url("/vbr-no-header.mp3")])
        try await server.stop()
        #expect(eventNames(events) == ["start vbr-no-header", "end vbr-no-header", "queue end"])
        #expect(sampleDifference(samples, try Fixtures.referenceFloat("vbr-no-header")) == nil)
    }

    @Test("a refused, a wrong and an unreachable URL each fail alone, naming the URL, and the queue goes on")
    func badURLsFailAlone() async throws {
        let server = try await serving(["join-1"])
        server.setRoute(
            "/page.mp3",
            {
                var page = HTTPTestServer.Route(body: Array("<html><body>Moved</body></html>".utf8))
                page.contentType = "text/html; charset=utf-8"
                return page
            }())
        server.setRoute(
            "/broken.mp3",
            {
                var broken = HTTPTestServer.Route(body: [])
                broken.status = "500 Internal Server Error"
                return broken
            }())
        server.setRoute(
            "/tune",
            {
                var playlist = HTTPTestServer.Route(body: Array("[playlist]\nFile1=/join-1.mp3\n".utf8))
                playlist.contentType = "audio/x-scpls"
                return playlist
            }())
        let closed = try await serving([])
        let unreachable = closed.url("/gone.mp3")
        try await closed.stop()
        let urls = [
            server.url("/missing.mp3"), server.url("/page.mp3"), server.url("/broken.mp3"), unreachable,
            server.url("/tune"), server.url("/join-1.mp3"),
        ]
        let (events, samples) = try await playOnNullSink(urls)
        try await server.stop()
        #expect(
            eventNames(events) == [
                "fail missing serverRefused", "fail page notMPEGAudio", "fail broken serverRefused",
                "fail gone networkFailure", "fail tune notMPEGAudio", "start join-1", "end join-1", "queue end",
            ])
        let playlist = events.compactMap { event -> DecoderError? in
            if case .itemFailed(_, let error) = event, error.url.lastPathComponent == "tune" { error } else { nil }
        }
        #expect(playlist.first?.reason == "is a playlist (audio/x-scpls), not audio", "\(playlist)")
        for case .itemFailed(let entry, let error) in events {
            #expect(error.description.hasPrefix(entry.url.absoluteString + ": "), "\(error)")
        }
        #expect(sampleDifference(samples, try Fixtures.referenceFloat("join-1")) == nil)
    }

    @Test("AAC, Ogg and HLS streams each fail alone, naming the format and what to choose instead")
    func otherFormatsFailByName() async throws {
        let server = try await serving(["join-1"])
        let types = [("/aac", "audio/aacp"), ("/ogg", "application/ogg"), ("/hls", "application/vnd.apple.mpegurl")]
        for (path, type) in types {
            var route = HTTPTestServer.Route(body: Array("#EXTM3U\n".utf8))
            route.contentType = type
            server.setRoute(path, route)
        }
        let (events, samples) = try await playOnNullSink(
            [server.url("/aac"), server.url("/ogg"), server.url("/hls"), server.url("/join-1.mp3")])
        try await server.stop()
        #expect(
            eventNames(events) == [
                "fail aac notMPEGAudio", "fail ogg notMPEGAudio", "fail hls notMPEGAudio", "start join-1", "end join-1",
                "queue end",
            ])
        let reasons = events.compactMap { event -> String? in
            if case .itemFailed(_, let error) = event { "\(error.reason) \(error.suggestion)" } else { nil }
        }
        #expect(reasons.count == 3)
        #expect(reasons.first?.contains("is AAC audio (audio/aacp); QueuePlayer plays MP3 only") == true, "\(reasons)")
        #expect(reasons.dropFirst().first?.contains("Ogg audio") == true, "\(reasons)")
        #expect(reasons.last?.contains("is an HLS stream") == true && reasons.last?.contains("direct MP3") == true)
        #expect(sampleDifference(samples, try Fixtures.referenceFloat("join-1")) == nil)
    }

    @Test("redirects are followed to the audio; a loop, more than 5, or 80 KiB of headers fail alone, saying which")
    func redirectsAndHeaders() async throws {
        let server = try await serving(["join-1"])
        func route(_ path: String, status: String = "302 Found", headers: [String]) {
            var route = HTTPTestServer.Route(body: [])
            (route.status, route.extraHeaders) = (status, headers)
            server.setRoute(path, route)
        }
        route("/moved.mp3", headers: ["Location: /again.mp3"])
        route("/again.mp3", headers: ["Location: /join-1.mp3"])
        route("/loop-a.mp3", headers: ["Location: /loop-b.mp3"])
        route("/loop-b.mp3", headers: ["Location: /loop-a.mp3"])
        for hop in 0..<6 { route("/hop-\(hop).mp3", headers: ["Location: /hop-\(hop + 1).mp3"]) }
        route("/hop-6.mp3", headers: ["Location: /join-1.mp3"])
        route("/fat.mp3", status: "200 OK", headers: ["X-Padding: " + String(repeating: "a", count: 90_000)])
        let names = ["loop-a", "hop-0", "fat", "moved"]
        let (events, samples) = try await playOnNullSink(names.map { server.url("/\($0).mp3") })
        try await server.stop()
        #expect(
            eventNames(events) == [
                "fail loop-a networkFailure", "fail hop-0 networkFailure", "fail fat networkFailure", "start moved",
                "end moved", "queue end",
            ])
        let reasons = events.compactMap { event -> String? in
            if case .itemFailed(_, let error) = event { error.reason } else { nil }
        }
        #expect(
            reasons == [
                "its server redirects in a loop", "its server redirected more than 5 times",
                "its server's answer has more than 80 KiB of headers",
            ])
        #expect(sampleDifference(samples, try Fixtures.referenceFloat("join-1")) == nil)
    }

    @Test("a server that trickles a byte every 100 ms fails its item as too slow, and the queue goes on")
    func trickleFails() async throws {
        // 1.6 s of the item, then 10 bytes a second where it needs 24,000.
        let server = try await serving(["sweep-44k-4s", "join-1"]) { route in
            if route.body.count > 90_000 { route.tricklesAfterBytes = 40_000 }
        }
        let (events, samples) = try await playOnNullSink(
            [server.url("/sweep-44k-4s.mp3"), server.url("/join-1.mp3")], pacing: .realTime)
        try await server.stop()
        let names = eventNames(events).filter { $0 != "start sweep-44k-4s" }
        #expect(names == ["fail sweep-44k-4s networkFailure", "start join-1", "end join-1", "queue end"], "\(names)")
        let failure = events.compactMap { event -> DecoderError? in
            if case .itemFailed(_, let error) = event { error } else { nil }
        }.first
        let reason = failure?.reason ?? "none"
        #expect(reason.hasPrefix("its server sends too slowly to play: "), "\(reason)")
        let reference = try Fixtures.referenceFloat("join-1")
        #expect(sampleDifference(Array(samples.suffix(reference.count)), reference) == nil)
    }

    @Test("a closed port is asked again for 10 s where items follow, then fails naming the URL and the refusal")
    func closedPortIsAskedAgainThenFails() async throws {
        let closed = try await serving([])
        let url = closed.url("/gone.mp3")
        try await closed.stop()
        let started = ContinuousClock.now
        #expect {
            _ = try MPG123Decoder(url: url, logger: quietLogger)
        } throws: { error in
            (error as? DecoderError)?.description.hasPrefix(
                url.absoluteString + ": no answer it could play for 10 s: connection refused") == true
        }
        // A decoder of its own is treated as one with items after it. It used to fail at the first refusal.
        #expect(ContinuousClock.now - started >= ReconnectPolicy.unansweredItemPatience)
    }

    @Test("a seek is refused in a file whose server ignores ranges, and carried out where it answers them")
    func seekNeedsRanges() async throws {
        let server = try await serving(["sweep-44k-4s"]) { $0.acceptsRanges = false }
        server.setRoute("/ranged.mp3", HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("join-1")))))
        for (path, seekable) in [("/sweep-44k-4s.mp3", false), ("/ranged.mp3", true)] {
            let item = PlayerItem(url: server.url(path))
            let player = QueuePlayer(items: [item], sink: NullSink(pacing: .realTime), logger: quietLogger)
            let statuses = player.values(of: \.currentItem?.status)
            // Prepared, not played: the seek is asked of an item that is still there however late the test's turn.
            player.preroll()
            for await status in statuses where status == .readyToPlay { break }
            #expect(await player.seek(to: MediaTime(seconds: 1, preferredTimescale: 44_100)) == seekable, "\(path)")
            let whole = [MediaTimeRange(start: .zero, duration: item.duration)]
            #expect(item.seekableTimeRanges == (seekable ? whole : []))
            player.pause()
        }
        try await server.stop()
    }

    @Test("a skip while a server has gone silent moves on at once, without waiting for the connection to time out")
    func skipLeavesASilentServer() async throws {
        // Past the 2 s (49 KB) that playing waits for.
        let server = try await serving(["sweep-44k-4s", "join-1"]) { route in
            if route.body.count > 90_000 { route.tricklesAfterBytes = 60_000 }
        }
        let engine = playing(
            [server.url("/sweep-44k-4s.mp3"), server.url("/join-1.mp3")], on: NullSink(pacing: .unpaced))
        var iterator = engine.events.makeAsyncIterator()
        #expect(await nextHeard(&iterator) == "start sweep-44k-4s")
        engine.advanceToNextItem()
        while let name = await nextHeard(&iterator), name != "start join-1" {}
        // A decoder that waited for the silent connection would have given up on it and asked again.
        #expect(server.requests.map(\.path) == ["/sweep-44k-4s.mp3", "/join-1.mp3"])
        engine.shutdown()
        try await server.stop()
    }

    @Test("a seek in a remote file lands on the same frame as in the local file")
    func seekIsSampleExact() async throws {
        let server = try await serving(["sweep-44k-4s"])
        let decoder = try MPG123Decoder(url: server.url("/sweep-44k-4s.mp3"), logger: quietLogger)
        try decoder.seek(toFrame: 100_000)
        var samples: [Float] = []
        var chunk = [Float](repeating: 0, count: 8192)
        while true {
            var span = chunk.mutableSpan
            let frames = try decoder.decode(into: &span)
            guard frames > 0 else { break }
            samples += chunk[..<(frames * 2)]
        }
        try await server.stop()
        let reference = try Fixtures.referenceFloat("sweep-44k-4s")
        #expect(sampleDifference(samples, Array(reference[200_000...])) == nil)
    }

    @Test("a live stream has no length and no seeking, comes back at its live edge when it ends, and plays on")
    func liveStream() async throws {
        let server = try await serving(["join-2"])
        var station = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("join-1"))))
        station.isLive = true
        server.setRoute("/join-1.mp3", station)
        let live = PlayerItem(url: server.url("/join-1.mp3"))
        let next = PlayerItem(url: server.url("/join-2.mp3"))
        let player = QueuePlayer(items: [live, next], sink: NullSink(pacing: .unpaced), logger: quietLogger)
        var changes = player.currentItemChanges().makeAsyncIterator()
        var events = player.playbackEvents().makeAsyncIterator()
        player.play()
        #expect(await changes.next() == live)
        // Its body ended after 1.5 s of sound: it was asked for again, from its live edge, not from a byte.
        let requests = await server.requests(atLeast: 2)
        #expect(requests.allSatisfy { $0 == HTTPTestServer.Request(path: "/join-1.mp3", range: nil) }, "\(requests)")
        // The gap is told as the sound after it is heard: at least the first wait after a loss, drawn from 75 to
        // 100 ms.
        var gap: (entry: QueueEntry, seconds: Double)?
        while gap == nil, let event = await events.next() {
            if case .liveGap(let entry, let seconds) = event { gap = (entry, seconds) }
        }
        let (entry, seconds) = try #require(gap)
        #expect(entry.url == live.url && seconds >= 0.075 && seconds < 5, "\(seconds) s")
        #expect(player.currentItem === live)
        #expect(live.status == .readyToPlay)
        #expect(live.duration == .indefinite)
        #expect(!player.seek(to: MediaTime(value: 1, timescale: 1)))
        player.advanceToNextItem()
        #expect(await changes.next() == next)
        player.pause()
        try await server.stop()
    }

    @Test(
        "a live stream joined mid-frame, and rejoined each time its body ends, is told as joins, not as damaged data",
        arguments: [1_000, 2_000])
    func joinMidFrame(_ cut: Int) async throws {
        // Cuts where libmpg123 took false headers before it locked on, as it did joining a real station.
        let body = Array(try Data(contentsOf: Fixtures.mp3("sweep-44k-4s")).dropFirst(cut))
        var station = HTTPTestServer.Route(body: body)
        station.isLive = true
        let server = try await HTTPTestServer(routes: ["/live": station])
        let log = CapturedLog()
        let decoder = try MPG123Decoder(url: server.url("/live"), logger: log.logger)
        var (decoded, gaps) = (0, 0)
        var chunk = [Float](repeating: 0, count: 8192)
        // The body is under 4 s: 20 s of sound is at least four rejoins.
        while gaps < 2, decoded < 20 * 44_100 {
            var span = chunk.mutableSpan
            decoded += try decoder.decode(into: &span)
            gaps += decoder.takeStreamMarks().count { if case .gap = $0.kind { true } else { false } }
        }
        try await server.stop()
        #expect(gaps == 2, "every rejoin is told as a gap")
        // A false header taken for the first frame gave 32 kHz.
        #expect(decoder.format.sampleRate == 44_100)
        let join = "joined the live stream mid-frame; skipped bytes until its frames lined up"
        #expect(log.messages(at: .info).contains(join), "\(log.all)")
        #expect(!log.all.contains("skipped damaged data and resynchronised"), "\(log.all)")
    }

    @Test("a SHOUTcast v1 server's 'ICY 200 OK' plays as the same stream from an HTTP server does")
    func shoutcast() async throws {
        var station = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("join-1"))))
        station.isLive = true
        station.liveProtocol = "ICY"
        let server = try await HTTPTestServer(routes: ["/shoutcast": station])
        let decoder = try MPG123Decoder(url: server.url("/shoutcast"), logger: quietLogger)
        #expect(decoder.isLive)
        var samples: [Float] = []
        var chunk = [Float](repeating: 0, count: 8192)
        while samples.count < 2 * 66_150 {
            var span = chunk.mutableSpan
            let frames = try decoder.decode(into: &span)
            samples += chunk[..<(frames * 2)]
        }
        try await server.stop()
        #expect(sampleDifference(Array(samples.prefix(2 * 66_150)), try Fixtures.referenceFloat("join-1")) == nil)
    }

    @Test("a server whose TLS certificate is not trusted is refused, never skipped, and the queue goes on")
    func untrustedCertificate() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("qp-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (certificate, key) = (
            folder.appendingPathComponent("cert.pem").path, folder.appendingPathComponent("key.pem").path
        )
        let made = await Subprocess.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", certificate,
            ])
        #expect(made.status == 0, "\(made.standardError)")
        var routes: [String: HTTPTestServer.Route] = [:]
        routes["/secret.mp3"] = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("join-1"))))
        let tls = try await HTTPTestServer(routes: routes, tls: (certificate, key))
        let plain = try await serving(["join-2"])
        let (events, samples) = try await playOnNullSink([tls.url("/secret.mp3"), plain.url("/join-2.mp3")])
        try await tls.stop()
        try await plain.stop()
        #expect(eventNames(events) == ["fail secret networkFailure", "start join-2", "end join-2", "queue end"])
        for case .itemFailed(_, let error) in events {
            #expect(error.reason.contains("certificate is not trusted"), "\(error)")
        }
        #expect(tls.requests.isEmpty, "nothing was asked of a server not trusted")
        #expect(sampleDifference(samples, try Fixtures.referenceFloat("join-2")) == nil)
    }
}

/// Alone: it holds every thread of Swift's shared pool while the item plays; beside the other suites it would stall
/// their tasks, and they would take threads it means to hold.
@Suite("Items fetched over HTTP beside a held thread pool", .tier(.alone), .timeLimit(.minutes(1)))
struct RemoteItemPoolTests {
    @Test("a download goes on while every thread of Swift's shared pool is held by someone else")
    func downloadsDoNotNeedTheSharedPool() async throws {
        let server = try await serving(["join-1"])
        let engine = queued([server.url("/join-1.mp3")], on: NullSink(pacing: .unpaced))
        let finished = DispatchSemaphore(value: 0)
        engine.listen { event in
            if event == .queueFinished { finished.signal() }
        }
        // One task per pool thread, each holding its thread until the queue has played (or 10 s have passed).
        let holders = (0..<ProcessInfo.processInfo.activeProcessorCount).map { _ in
            Task.detached {
                let played = finished.wait(timeout: .now() + 10) == .success
                finished.signal()
                return played
            }
        }
        engine.play()
        for holder in holders {
            #expect(await holder.value, "the item did not play while the pool was held")
        }
        engine.shutdown()
        try await server.stop()
    }
}

import Foundation
import Synchronization
import TestSupport

@testable import QueuePlayer

/// Radio and podcasts for months, in minutes: a live item from Debian's Icecast server through outages of random
/// length (its source gone, as when a station's encoder restarts, or the server itself down, as when it or a router
/// restarts), a title set on the server between outages, and during each outage a podcast episode from another
/// server whose connection drops at random bytes.
///
/// The source sends about 10 times faster than real time and the null sink plays as fast as it gets audio, so an
/// hour of the soak is about ten hours of a station. The seed draws the outages, their lengths and the drops: the
/// same seed replays the same faults (their timing is the machine's). Outage lengths are the fault, slept out; the
/// rest waits on events. Every event is stamped as the engine's event thread posts it, so a busy test pool that runs
/// this task late does not lengthen a measured return.
struct NetworkSoak {
    var seed: UInt64
    /// How long to run, in seconds of wall time.
    var seconds: Double
    /// The longest outage, in seconds; each is drawn between 1 s and this.
    var longestOutage: Double

    /// What the soak saw.
    struct Report: CustomStringConvertible {
        /// One outage: what went away, for how long, and how soon after the station answered again its sound was
        /// heard (the gap told).
        struct Outage {
            var serverDown: Bool
            var seconds: Double
            var soundBack: Double
        }

        var seed: UInt64
        var outages: [Outage] = []
        var titlesHeard = 0
        /// Losses told while nothing was taken away: the station is meant to play on through them, unless icecast2
        /// crashed (``IcecastStation``).
        var unexpectedGaps = 0
        /// Crashes of icecast2 while the station was up, each an outage the soak did not make.
        var icecastCrashes = 0
        var episodes = 0
        var episodesBitExact = 0
        var drops = 0
        /// Warnings logged (a loss is told once, however many attempts it takes).
        var warnings = 0
        /// Open descriptors at the end of every outage from the warm-up's last on.
        var descriptorsByCycle: [Int] = []
        /// Open descriptors after ``warmUpCycles``, and the most after that.
        var descriptors: (afterWarmUp: Int, peak: Int) {
            (descriptorsByCycle.first ?? 0, descriptorsByCycle.max() ?? 0)
        }
        /// What the descriptors were, by kind (`socket`, `pipe`, `[eventfd]` and the other anonymous kinds, a path),
        /// after the warm-up and at the peak: what grew, when something did.
        var descriptorKinds = (afterWarmUp: "", atPeak: "")
        /// Threads after ``warmUpCycles``, and the most after that.
        var threads = (afterWarmUp: 0, peak: 0)
        /// Resident memory (MiB) at the end of every outage from the warm-up's last on: a trend tells a leak from a
        /// step.
        var residentByCycle: [Double] = []
        /// Bytes (MiB) the allocator has handed out and not had back, at the same points: what a leak grows.
        /// Resident memory also holds what was freed and kept by the allocator's arenas.
        var heapInUseByCycle: [Double] = []
        /// Resident memory (MiB) after ``warmUpCycles``, and the most after that.
        var residentMiB: (afterWarmUp: Double, peak: Double) {
            (residentByCycle.first ?? 0, residentByCycle.max() ?? 0)
        }
        /// Heap in use (MiB) after ``warmUpCycles``, and the most after that.
        var heapInUseMiB: (afterWarmUp: Double, peak: Double) {
            (heapInUseByCycle.first ?? 0, heapInUseByCycle.max() ?? 0)
        }
        var wallSeconds = 0.0

        /// `figures` at each tenth of the cycles measured, the first and the last included (every cycle's when there
        /// are 11 or fewer).
        static func byTenth<Figure>(_ figures: [Figure]) -> [Figure] {
            guard figures.count > 11 else { return figures }
            let last = figures.count - 1
            return (0...10).map { figures[$0 * last / 10] }
        }

        var description: String {
            let returns = outages.map(\.soundBack).sorted()
            let median = returns.isEmpty ? 0 : returns[returns.count / 2]
            let down = outages.filter(\.serverDown).count
            return """
                network soak seed \(seed): \(outages.count) outages (\(down) of the server, \
                \(outages.count - down) of the source; \(Self.format(outages.map(\.seconds).reduce(0, +))) s in all, \
                longest \(Self.format(outages.map(\.seconds).max() ?? 0)) s); sound back after the station answered: \
                median \(Self.format(median)) s, slowest \(Self.format(returns.last ?? 0)) s; \(titlesHeard) titles \
                heard; \(unexpectedGaps) gaps without an outage; \(icecastCrashes) icecast2 crashes; \
                \(episodesBitExact) of \(episodes) episodes \
                bit-exact through \(drops) drops; \(warnings) warnings; after \(NetworkSoak.warmUpCycles) outages \
                and at most after them: descriptors \(descriptors.afterWarmUp) (\(descriptorKinds.afterWarmUp)), \
                \(descriptors.peak) (\(descriptorKinds.atPeak); by tenths: \
                \(Self.byTenth(descriptorsByCycle).map(String.init).joined(separator: " "))); threads \
                \(threads.afterWarmUp), \(threads.peak); resident \(Self.format(residentMiB.afterWarmUp)), \
                \(Self.format(residentMiB.peak)) MiB (by tenths of the outages after: \
                \(Self.byTenth(residentByCycle).map(Self.format).joined(separator: " "))); heap in use \
                \(Self.format(heapInUseMiB.afterWarmUp)), \(Self.format(heapInUseMiB.peak)) MiB (by tenths: \
                \(Self.byTenth(heapInUseByCycle).map(Self.format).joined(separator: " "))); \
                \(Self.format(wallSeconds)) s
                """
        }

        private static func format(_ value: Double) -> String { String(format: "%.2f", value) }
    }

    /// Why the soak stopped before its time: the station was given up, or the queue moved on.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The outages after which the process has its threads and its allocator's arenas (resident memory grew for the
    /// first 8 in a run of 35, then stayed within 0.3 MiB).
    static let warmUpCycles = 10

    private typealias Stamped = (at: ContinuousClock.Instant, event: PlaybackEvent)

    func run() async throws -> Report {
        var random = SeededGenerator(state: seed)
        var report = Report(seed: seed)
        let started = ContinuousClock.now
        let station = try await IcecastStation(
            mount: "/radio.mp3", file: Fixtures.mp3("stereo-44k-5s"), name: "QP Radio")
        let log = CapturedLog(keepingFrom: .warning)
        let engine = PlaybackEngine(sink: NullSink(pacing: .unpaced), logger: log.logger)
        engine.enqueue([station.server.url("/radio.mp3")])
        let (stamped, tell) = AsyncStream.makeStream(of: Stamped.self)
        engine.listen { event in tell.yield((.now, event)) }
        // A step that outlasts the longest outage by half a minute is stuck: say which, and end the station's events
        // so that a wait for one of them ends too, naming its step.
        let watch = StepWatch(limit: .seconds(longestOutage + 30)) { step in
            print("network soak seed \(seed): stuck at \(step)")
            tell.finish()
        }
        defer {
            watch.end()
            engine.shutdown()
            tell.finish()
        }
        var events = stamped.makeAsyncIterator()
        var episodes = try await EpisodePlayer()
        defer { episodes.engine.shutdown() }
        engine.play()
        watch.begin("the station's start")
        _ = try await next(&events, report: &report, waitingFor: "the station to start") {
            if case .itemStarted = $0 { true } else { false }
        }

        var cycle = 0
        while ContinuousClock.now - started < .seconds(seconds) {
            cycle += 1
            let title = "Soak \(cycle): Zoë’s “東京” ♫"
            watch.begin("cycle \(cycle): setting the title")
            try await station.setTitle(title)
            watch.begin("cycle \(cycle): hearing the title")
            _ = try await next(&events, report: &report, waitingFor: "cycle \(cycle)'s title to be heard") { event in
                if case .metadataChanged(_, let metadata) = event { metadata.title == title } else { false }
            }
            report.titlesHeard += 1

            let serverDown = Bool.random(using: &random)
            let length = Double.random(in: 1...longestOutage, using: &random)
            watch.begin("cycle \(cycle): stopping the source")
            try await station.takeDown(stoppingServer: serverDown)
            // The fault lasts this long; an episode plays meanwhile.
            let cuts = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                Int.random(in: 2_000...20_000, using: &random)
            }
            async let outage: Void = Task.sleep(for: .seconds(length))
            watch.begin("cycle \(cycle): an episode dropped after \(cuts) bytes, during a \(length) s outage")
            let exact = try await episodes.play(droppingAfter: cuts)
            try await outage
            report.episodes += 1
            report.drops += cuts.count
            if exact { report.episodesBitExact += 1 }

            watch.begin("cycle \(cycle): starting the source again (icecast2 stopped: \(serverDown))")
            try await station.bringUp()
            let answering = await station.answeringSince
            watch.begin("cycle \(cycle): hearing the station back")
            let back = try await next(&events, report: &report, waitingFor: "cycle \(cycle)'s outage to end") {
                if case .liveGap = $0 { true } else { false }
            }
            // A crash's restart before the sound came back starts the wait again.
            let restarted = await station.answeringSince
            let waitedFrom = restarted < back ? restarted : answering
            report.outages.append(
                .init(serverDown: serverDown, seconds: length, soundBack: (back - waitedFrom).inSeconds))
            guard engine.queue().count == 1 else { throw Failure(description: "the queue moved on: \(engine.queue())") }
            // At the same moment of every cycle: the station back, no episode playing.
            report.measure(cycle: cycle)
        }
        report.warnings = log.messages(at: .warning).count
        report.icecastCrashes = await station.crashes
        let failedRestarts = await station.failedRestarts
        guard failedRestarts.isEmpty else {
            throw Failure(description: "icecast2 crashed and could not be started again: \(failedRestarts)")
        }
        watch.begin("the end: stopping the source")
        try await station.takeDown(stoppingServer: true)
        try await episodes.server.stop()
        report.wallSeconds = (ContinuousClock.now - started).inSeconds
        return report
    }

    /// The stamp of the next event that `matches`, counting the gaps told on the way (the outages' own are matched
    /// by the caller). Throws, naming what it was `waitingFor`, when the station fails, the queue ends, or the wait
    /// is cancelled (the test's time limit).
    private func next(
        _ events: inout AsyncStream<Stamped>.Iterator, report: inout Report, waitingFor: String,
        matches: (PlaybackEvent) -> Bool
    ) async throws -> ContinuousClock.Instant {
        while let (at, event) = await events.next() {
            if matches(event) { return at }
            switch event {
            case .liveGap: report.unexpectedGaps += 1
            case .itemFailed(_, let error):
                throw Failure(description: "the station was given up, waiting for \(waitingFor): \(error)")
            case .queueFinished: throw Failure(description: "the queue ended, waiting for \(waitingFor)")
            default: continue
            }
        }
        throw Failure(description: "the events ended (cancelled?), waiting for \(waitingFor)")
    }

    /// The podcast side: one player and one server for every episode, as a daemon and a podcast host have,
    /// recording what it plays.
    private struct EpisodePlayer {
        /// A recording the episode's size (4 s); each episode's is taken when it ends.
        let sink = NullSink(pacing: .unpaced, recordingFrames: 200_000)
        let engine: PlaybackEngine
        let server: HTTPTestServer
        var events: AsyncStream<PlaybackEvent>.Iterator
        let reference: [Float]
        let body: [UInt8]

        init() async throws {
            engine = PlaybackEngine(sink: sink, logger: quietLogger)
            events = engine.events.makeAsyncIterator()
            reference = try Fixtures.referenceFloat("sweep-44k-4s")
            body = Array(try Data(contentsOf: Fixtures.mp3("sweep-44k-4s")))
            server = try await HTTPTestServer(routes: [:])
        }

        /// Plays an episode whose first answers drop after `cuts` bytes of their bodies; true when it was heard bit
        /// for bit as its reference decode, start to end, asked for once more per drop.
        mutating func play(droppingAfter cuts: [Int]) async throws -> Bool {
            var route = HTTPTestServer.Route(body: body)
            route.dropsAfterBytes = cuts
            server.setRoute("/episode.mp3", route)
            let askedBefore = server.requests.count
            engine.enqueue([server.url("/episode.mp3")])
            engine.play()
            var heard: [PlaybackEvent] = []
            while let event = await events.next() {
                heard.append(event)
                if event == .queueFinished { break }
            }
            return eventNames(heard) == ["start episode", "end episode", "queue end"]
                && sampleDifference(sink.takeRecording(), reference) == nil
                && server.requests.count - askedBefore == cuts.count + 1
        }
    }
}

extension NetworkSoak.Report {
    /// Notes the process's open descriptors, threads, resident memory and heap in use at the end of `cycle`: the
    /// baseline after the warm-up, the peaks after it.
    fileprivate mutating func measure(cycle: Int) {
        guard cycle >= NetworkSoak.warmUpCycles else { return }
        let files = FileManager.default
        let count = { (folder: String) in (try? files.contentsOfDirectory(atPath: folder).count) ?? 0 }
        let now = (descriptors: count("/proc/self/fd"), threads: count("/proc/self/task"), resident: Soak.residentMiB())
        let kinds = Dictionary(
            grouping: ((try? files.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).map { fd in
                let target = (try? files.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) ?? "?"
                // `anon_inode:[eventfd]` is told by what it is; `socket:[1234]` and `pipe:[1234]` by their kind.
                if target.hasPrefix("anon_inode:") { return String(target.dropFirst("anon_inode:".count)) }
                return target.split(separator: ":").first.map(String.init) ?? target
            }, by: { $0 }
        ).map { "\($0.key) \($0.value.count)" }.sorted().joined(separator: ", ")
        if cycle == NetworkSoak.warmUpCycles {
            threads.afterWarmUp = now.threads
            descriptorKinds.afterWarmUp = kinds
        }
        if now.descriptors > descriptors.peak || descriptorsByCycle.isEmpty { descriptorKinds.atPeak = kinds }
        threads.peak = max(threads.peak, now.threads)
        descriptorsByCycle.append(now.descriptors)
        residentByCycle.append(now.resident)
        heapInUseByCycle.append(Heap.inUseMiB())
    }
}

/// The step a soak is at, and a timer that calls `stuck` with it when a step outlasts `limit`: the test's own time
/// limit cancels the task without saying where it was.
///
/// Threading: any thread.
private final class StepWatch: Sendable {
    private let limit: Duration
    private let stuck: @Sendable (String) -> Void
    private let timer = Mutex<Task<Void, Never>?>(nil)

    init(limit: Duration, stuck: @escaping @Sendable (String) -> Void) {
        self.limit = limit
        self.stuck = stuck
    }

    /// The soak is at `step` from now on.
    func begin(_ step: String) {
        let timer = Task { [limit, stuck] in
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            stuck(step)
        }
        self.timer.withLock { previous in
            previous?.cancel()
            previous = timer
        }
    }

    /// The soak is over.
    func end() { timer.withLock { $0?.cancel() } }
}

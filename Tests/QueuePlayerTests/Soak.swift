import Dispatch
import Foundation
import Logging
import TestSupport

@testable import QueuePlayer

/// A replayable soak: a ``QueuePlayer`` on a ``SteppedSink`` plays for a given length of audio, with a random
/// command every few seconds of audio time drawn from a seeded generator, and after every command and every step
/// of audio the player is compared with a ``SoakModel``: the queue, the current item, the rate and the time heard,
/// and every frame rendered against the reference decode of the item the model says is playing (nothing heard
/// twice, nothing skipped). Resident memory is sampled as it goes. The same seed gives the same run: every wait is
/// for the engine to carry out what it was told, never for time to pass.
struct Soak {
    /// What one run did.
    struct Report: CustomStringConvertible {
        var seed: UInt64
        var commands = 0
        var commandCounts: [SoakCommand: Int] = [:]
        var secondsHeard = 0.0
        var framesHeard = 0
        /// Samples of mono files heard within ``SoakModel/monoTolerance`` of the reference but not bit-exact, and the
        /// largest difference.
        var inexactSamples = 0
        var largestDifference: Float = 0
        /// Over the whole run: every command with its arguments and every step's length.
        var digest = FNV1a()
        /// Resident memory (MiB) once the run had warmed up (a tenth of the way), and the most after that.
        var residentAfterWarmUp = 0.0
        var residentPeak = 0.0
        /// Resident memory (MiB) at each tenth of the way, to show a trend.
        var residentByTenth: [Double] = []
        var wallSeconds = 0.0

        var description: String {
            let counts = SoakCommand.allCases.map { "\($0) \(commandCounts[$0, default: 0])" }.joined(separator: ", ")
            return String(
                format: "soak seed %llu: %.2f h of audio (%ld frames) in %.1f s, %ld commands (%@); "
                    + "%ld mono samples not bit-exact (at most %.1e off); "
                    + "resident %.1f MiB after warm-up, %.1f MiB at most; "
                    + "by tenths %@; digest %016llx",
                seed, secondsHeard / 3600, framesHeard, wallSeconds, commands, counts, inexactSamples,
                Double(largestDifference), residentAfterWarmUp, residentPeak,
                residentByTenth.map { String(format: "%.1f", $0) }.joined(separator: " "), digest.value)
        }
    }

    /// A step of the run that went wrong, with what is needed to replay it.
    struct Failure: Error, CustomStringConvertible {
        var seed: UInt64
        var command: Int
        var what: String
        var description: String { "soak seed \(seed), command \(command): \(what)" }
    }

    let seed: UInt64
    let audioSeconds: Double
    /// How long to wait for the engine to carry out a command or deliver frames before calling it stuck.
    var patience: DispatchTimeInterval = .seconds(20)

    /// Runs the soak on the calling thread (it blocks: call it from a thread of its own) and returns its report, or
    /// throws the first ``Failure``.
    func run() throws -> Report {
        let started = ContinuousClock.now
        let files = try SoakFile.catalog()
        var random = SeededGenerator(state: seed)
        var report = Report(seed: seed)
        let sink = SteppedSink()
        let logger = Logger(label: "soak") { _ in SwiftLogNoOpLogHandler() }
        let application = Application(manifest: AppManifest(), logger: logger)
        let player = QueuePlayer(sink: sink, logger: logger, application: application)
        defer { player.shutdown() }
        // Signalled at every change the player shows and every event it handles.
        let playerChanged = DispatchSemaphore(value: 0)
        let observerQueue = DispatchQueue(label: "soak.observer")
        let token = player.observe(\.soakPicture, queue: observerQueue) { _ in playerChanged.signal() }
        defer { player.removeObserver(token) }
        let events = player.playbackEvents()
        let eventWatcher = Task { for await _ in events { playerChanged.signal() } }
        defer { eventWatcher.cancel() }
        var model = SoakModel()
        var commandIndex = 0

        func fail(_ what: String) -> Failure { Failure(seed: seed, command: commandIndex, what: what) }

        /// Waits until every restart the engine was asked for has taken effect, then until the player shows what
        /// the model says, then compares the time heard.
        func settle(after what: String) throws {
            let deadline = DispatchTime.now() + patience
            guard player.engine.waitUntilRestartsAreCarriedOut(until: deadline) else {
                throw fail("\(what): the restart was never carried out")
            }
            let expected = model.picture
            while !player.engine.hasPostedEventsDue || player.soakPicture != expected {
                // Each event the player handles and each change it shows says when to look again: a signal missed
                // is a defect, which the deadline reports.
                guard playerChanged.wait(timeout: deadline) == .success else {
                    throw fail(
                        "\(what): the player shows \(describe(player.soakPicture)), the model \(describe(expected))")
                }
            }
            let time = player.currentTime()
            let (frame, sampleRate) = model.expectedTime
            let heard = sampleRate.map { Int(time.convertScale(Int32($0)).value) } ?? Int(time.value)
            guard heard == frame else {
                throw fail(
                    "\(what): the player is at \(time), the model at frame \(frame) of \(sampleRate ?? 0) Hz; "
                        + player.engine.soakDiagnostics)
            }
        }

        func describe(_ picture: SoakPicture) -> String {
            let names = Dictionary(
                model.queue.map { (ObjectIdentifier($0.item), $0.file.name) }, uniquingKeysWith: { first, _ in first })
            let items = picture.items.map { names[$0] ?? "?" }.joined(separator: ", ")
            let current = picture.currentItem.map { names[$0] ?? "another item" } ?? "none"
            return "[\(items)] current \(current) rate \(picture.rate)"
        }

        player.insert(PlayerItem(url: files[0].url), after: nil)
        model.insert(SoakEntry(item: player.items()[0], file: files[0]), at: 0)
        player.play()
        model.play()
        try settle(after: "the first play")
        while model.secondsHeard < audioSeconds {
            commandIndex += 1
            let command = SoakCommand.next(for: model, using: &random)
            let applied = try command.apply(
                to: player, model: &model, application: application, files: files, using: &random)
            report.commands += 1
            report.commandCounts[command, default: 0] += 1
            report.digest.add(applied)
            try settle(after: applied)

            let length = model.stepLength(about: Int.random(in: 11_025...176_400, using: &random))
            report.digest.add("step \(length)")
            do {
                try sink.render(frames: length, deadline: .now() + patience) { samples, sampleRate in
                    try model.hear(samples, sampleRate: sampleRate)
                }
            } catch let error as SoakModel.Mismatch {
                throw fail("after \(applied), heard wrong: \(error)")
            } catch {
                throw fail("after \(applied): \(error)")
            }
            try settle(after: "\(length) frames after \(applied)")

            let resident = Self.residentMiB()
            if model.secondsHeard < audioSeconds / 10 {
                report.residentAfterWarmUp = resident
            }
            report.residentPeak = max(report.residentPeak, resident)
            if model.secondsHeard >= audioSeconds * Double(report.residentByTenth.count + 1) / 10 {
                report.residentByTenth.append(resident)
            }
        }
        report.secondsHeard = model.secondsHeard
        report.framesHeard = model.framesHeard
        report.inexactSamples = model.inexactSamples
        report.largestDifference = model.largestDifference
        report.wallSeconds = (ContinuousClock.now - started).inSeconds
        return report
    }

    /// This process's resident memory, in MiB, from `/proc/self/statm` (read with plain POSIX calls: reading it
    /// through Foundation keeps a buffer per read, and the soak reads it thousands of times).
    static func residentMiB() -> Double {
        let descriptor = open("/proc/self/statm", O_RDONLY)
        guard descriptor >= 0 else { return 0 }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 128)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return 0 }
        let fields = String(decoding: bytes[0..<count], as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Double(fields[1]) else { return 0 }
        return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }
}

extension PlaybackEngine {
    /// The engine's state in one line, for a failure's message.
    var soakDiagnostics: String {
        let audible = audibleFrame()
        return state.withLock { state in
            let segments = state.timeline.segments.map { segment in
                "\(segment.entry.id)@\(segment.startFrame)..\(segment.endFrame.map(String.init) ?? "?")"
                    + (segment.hasStarted ? " started" : "") + " from \(segment.resumeFrame)"
            }
            return "engine: audible \(audible), \(state.activity.name), "
                + "timeline [\(segments.joined(separator: ", "))], "
                + "pending \(state.pending.map(\.id)), restart \(state.waitingRestart.map { "\($0.startFrame)" } ?? "none")"
        }
    }

    /// True when the event thread has posted every event due at the frame heard now (starts, ends, failures, the
    /// end of the queue): what ``status()`` says is then what the events said.
    var hasPostedEventsDue: Bool {
        let audible = audibleFrame()
        return state.withLock { state in
            !state.queueIsDone && (state.timeline.nextEventFrame.map { $0 > audible } ?? true)
        }
    }
}

/// A 64-bit FNV-1a hash of the run's commands, so that two runs of one seed can be compared in one line.
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ text: String) {
        for byte in text.utf8 {
            value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        value = (value ^ 0x0a) &* 0x0000_0100_0000_01b3
    }
}

/// SplitMix64: a small generator with a fixed seed, so that a run can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

import Foundation

/// A private server speaking the PulseAudio protocol with one null sink (`queueplayer`, 44.1 kHz stereo), in a
/// folder of its own, so tests never share a sink: PulseAudio itself (`scripts/pulse-server`: s16, `norewinds=1`)
/// or a headless PipeWire stack with `pipewire-pulse` (`scripts/pipewire-server`: mixing in 32-bit float). Stop it
/// with ``stop()``.
///
/// Starting never skips: if no server comes up, the test fails, with or without `CI` set.
public final class PulseServer: Sendable {
    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Which server answers the PulseAudio protocol.
    public enum Kind: String, Sendable, CaseIterable, CustomStringConvertible {
        case pulseAudio = "PulseAudio"
        /// PulseAudio whose null sink rewinds what it mixed ahead (on a new stream, a flush, a volume change), as
        /// a sound card's sink does; the plain one never rewinds, so that its monitor records what streams wrote.
        case rewindingPulseAudio = "PulseAudio (rewinding sink)"
        case pipeWire = "PipeWire"

        /// The script that starts and stops it.
        var script: String { self == .pipeWire ? "scripts/pipewire-server" : "scripts/pulse-server" }

        /// True when a new stream's first frames may be missing from the monitor's recording (up to 40 ms): the sink
        /// rewinds to start the stream at once, mixing those frames into a stretch the monitor has already recorded
        /// as silence. A listener hears them; the recording, and so a test, cannot.
        public var rewindsAtStreamStart: Bool { self == .rewindingPulseAudio }

        /// What a recording may miss, or hold as silence, made while the machine did `load` (nil: unknown, taken as
        /// no steal). Nothing but on PipeWire, whose graph (0.3.65, its data threads at real-time priority) loses a
        /// stream's quanta for every player alike:
        /// - now and then on a quiet machine. Measured with `scripts/bench_glitches.py`, 10 s items into this
        ///   harness's null sink: 3 of 20 runs of the daemon, 4 of 20 of mpg123 and 2 of 20 of mpv had one or two
        ///   glitches of 512 to 1,536 frames in all, 512 frames lost at a quantum's boundary with 512 or 1,024 frames
        ///   of silence in their place, heard alike by parec and by pw-record on PipeWire's own protocol (the graph
        ///   lost them, not the recording). So: two runs of at most 1,024 frames.
        /// - at about every stall when the host takes the CPUs away (steal). Measured with `--load stalls` (the
        ///   whole machine's work frozen for 20 to 80 ms every 0.25 to 0.75 s): 99 stalls in five runs of the daemon
        ///   and 102 in five of mpg123 gave 120 and 121 glitches (0.9 to 1.37 a stall in a run), up to 3,072 frames
        ///   each, pw-record hearing them too, where PulseAudio lost nothing in ten runs with 194 stalls. So: 1.5
        ///   runs more for every 20 ms of steal (the shortest stall; steal is summed over the CPUs, so one stall of
        ///   both counts twice), and then every run up to 4,096 frames (one 80 ms stall, in whole quanta).
        ///   A CI run's PipeWire recordings had three runs of 512 frames over 1,030 ms of steal.
        public func droppedQuanta(during load: MachineLoad.Change?) -> GlitchAllowance {
            guard self == .pipeWire else { return .none }
            let stalls = (load?.stealMilliseconds ?? 0) / 20
            guard stalls >= 1 else { return GlitchAllowance(frames: 1_024, count: 2) }
            return GlitchAllowance(frames: 4_096, count: 2 + Int((stalls * 1.5).rounded(.up)))
        }

        /// A word for the server's folder, one per kind: two kinds of one test run side by side, and a folder
        /// shared by the plain and the rewinding PulseAudio had both tests' daemons playing into one sink.
        var folderTag: String {
            switch self {
            case .pulseAudio: "pulse"
            case .rewindingPulseAudio: "pulse-rewinding"
            case .pipeWire: "pipewire"
            }
        }

        /// The pid files the script writes in the server's folder, and the program (`comm`) each names.
        var processes: [(file: String, program: String)] {
            guard self == .pipeWire else { return [("runtime/pulse/pid", "pulseaudio")] }
            return [
                ("pipewire-pulse.pid", "pipewire-pulse"), ("wireplumber.pid", "wireplumber"),
                ("pipewire.pid", "pipewire"), ("dbus.pid", "dbus-daemon"),
            ]
        }

        /// What the script's `start` takes after the folder.
        var startOptions: [String] { self == .rewindingPulseAudio ? ["--rewinds"] : [] }

        public var description: String { rawValue }
    }

    public let kind: Kind
    public let directory: String
    /// The address to pass to `PulseAudioSink(server:)` or `playerctl daemon --server`.
    public let address: String

    public init(name: String, kind: Kind = .pulseAudio) async throws {
        self.kind = kind
        directory = Scratch.uniquePath("\(kind.folderTag)-\(name)")
        let result = await Subprocess.run(Self.script(kind), ["start", directory] + kind.startOptions)
        guard result.status == 0 else {
            throw StartError(
                description: "no \(kind.rawValue) server could be started in \(directory): "
                    + "\(result.standardError) (run scripts/setup to install it)")
        }
        // `start` prints the address (what `address` prints) and nothing else: anything more is a tool's message
        // that went astray.
        let printed = result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        let expected = await Subprocess.run(Self.script(kind), ["address", directory]).standardOutput
        guard printed == expected.trimmingCharacters(in: .whitespacesAndNewlines) else {
            throw StartError(
                description: "\(kind.script) start \(directory) printed \"\(printed)\", not the server's address alone")
        }
        address = printed
    }

    /// Stops the server (a test of a dying server calls this mid-playback).
    public func stop() async {
        _ = await Subprocess.run(Self.script(kind), ["stop", directory])
    }

    /// Starts the server again at the same address, after ``stop()`` (a test of a server that restarts).
    public func restart() async throws {
        let result = await Subprocess.run(Self.script(kind), ["start", directory] + kind.startOptions)
        guard result.status == 0 else {
            throw StartError(
                description: "the \(kind.rawValue) server in \(directory) did not restart: \(result.standardError)")
        }
    }

    /// Runs `pactl` against this server with `arguments` (`["list", "short", "sinks"]`, `["unload-module", "7"]`).
    public func pactl(_ arguments: [String]) async -> Subprocess.Result {
        await Subprocess.run("/usr/bin/pactl", ["--server", address] + arguments)
    }

    /// Waits until a playback stream whose `pactl list short sink-inputs` line contains `text` (such as `48000Hz`)
    /// is connected; false after `timeout` seconds. Looks again at each new stream the server announces.
    public func waitForSinkInput(matching text: String, timeout: Double = 10) async -> Bool {
        guard let events = try? LineReader("/usr/bin/pactl", ["--server", address, "subscribe"], environment: [:])
        else { return false }
        defer { events.stop() }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let inputs = await pactl(["list", "short", "sink-inputs"])
            if inputs.standardOutput.contains(text) { return true }
            // pactl may still be subscribing while a stream appears: without news for a second, look again.
            var announced = false
            while !announced {
                let remaining = deadline.timeIntervalSinceNow
                guard remaining > 0 else { return false }
                guard let event = await events.nextLine(within: min(remaining, 1)) else { break }
                announced = event.contains("'new' on sink-input")
            }
        }
    }

    /// True while every process of the server runs.
    public var isRunning: Bool { livingProcesses().count == kind.processes.count }

    /// Kills the server's processes at once. Not the script's `stop`: that waits a second for a PulseAudio started
    /// with SIGTERM blocked (as a test runner's threads start it), and a deinit runs on one of the few threads Swift's
    /// tasks share, so every other test's tasks waited with it.
    deinit {
        for pid in livingProcesses() { kill(pid, SIGKILL) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The server's processes that still run, by the pid files its script wrote, each checked to be still the
    /// program it was and to have this server's folder in its environment: a pid file left by a server killed earlier
    /// may name a pid the system has since given to another test's server.
    private func livingProcesses() -> [pid_t] {
        kind.processes.compactMap { file, program in
            guard let text = try? String(contentsOfFile: "\(directory)/\(file)", encoding: .utf8),
                let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0,
                let name = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
                name.trimmingCharacters(in: .newlines) == program,
                let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ"),
                String(decoding: environment, as: UTF8.self).contains(directory + "/")
            else { return nil }
            return pid
        }
    }

    private static func script(_ kind: Kind) -> String {
        Fixtures.packageRoot.appendingPathComponent(kind.script).path
    }
}

/// Records the null sink's monitor with `parec` into a file, as raw s16le at 44.1 kHz, stereo unless told; or what a
/// pipe sink writes (``init(pipeSink:on:)``).
public final class MonitorRecording {
    private let process = Process()
    private let file = Subprocess.temporaryFile("raw")
    private let bytesPerFrame: Int
    private let fifoPath: String?
    private let loadAtStart = MachineLoad.now()

    /// What the machine did while recording (``MachineLoad/since(_:)``), once ``finish()`` has stopped it; nil before,
    /// or where `/proc/stat` cannot be read. Steal (the host taking the CPUs away) makes PipeWire's graph lose quanta:
    /// ``PulseServer/Kind/droppedQuanta(during:)`` allows for it, and a message beside a glitch prints it.
    public private(set) var machineLoad: MachineLoad.Change?

    /// Starts recording `monitor` (the null sink's, by default) on `server`, and waits until parec is connected. With
    /// `channelMap` (PulseAudio's names, as the monitored sink has them), that many channels in that order.
    public init(
        server: PulseServer, monitor: String = "queueplayer.monitor", channelMap: [String]? = nil
    )
        async throws
    {
        let channels = channelMap?.count ?? 2
        bytesPerFrame = channels * 2
        fifoPath = nil
        process.executableURL = URL(fileURLWithPath: "/usr/bin/parec")
        process.arguments =
            [
                "--server", server.address, "-d", monitor, "--raw", "--format=s16le", "--rate=44100",
                "--channels=\(channels)", "--latency-msec=10", file.path,
            ] + (channelMap.map { ["--channel-map=" + $0.joined(separator: ",")] } ?? [])
        // Not the test runner's output: a parec left running by a test that crashed would hold it open, and
        // `swift test` would wait for it forever.
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let recordingsBefore = await Self.recordingStreams(on: server)
        try Subprocess.spawn(process)
        // On PulseAudio parec writes silence as soon as it is connected: wait for the first bytes. PipeWire's null
        // sink writes nothing while suspended: there, wait for one more recording stream to show on the server.
        let deadline = Date().addingTimeInterval(5)
        while Self.size(of: file) == 0, Date() < deadline, process.isRunning {
            if server.kind == .pipeWire, await Self.recordingStreams(on: server) > recordingsBefore { break }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Loads a PulseAudio pipe sink called `sink` on `server`, paced by the system clock, and records what it writes
    /// (44.1 kHz stereo). Unlike a monitor, whose recording stream drops the fragment it was filling (10 ms) when the
    /// sink suspends, a pipe sink's output holds every frame played through a suspension. Make it the default sink
    /// before the player opens its stream.
    public init(pipeSink sink: String, on server: PulseServer) async throws {
        bytesPerFrame = 4
        let fifo = file.path + ".fifo"
        fifoPath = fifo
        let loaded = await server.pactl([
            "load-module", "module-pipe-sink", "file=\(fifo)", "sink_name=\(sink)", "rate=44100", "channels=2",
            "format=s16le", "use_system_clock_for_timing=yes",
        ])
        guard loaded.status == 0 else {
            throw PulseServer.StartError(description: "pactl load-module module-pipe-sink: \(loaded.standardError)")
        }
        process.executableURL = URL(fileURLWithPath: "/bin/cat")
        process.arguments = [fifo]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: file)
        process.standardError = FileHandle.nullDevice
        try Subprocess.spawn(process)
        // The sink writes silence while nothing plays: the first bytes say the reader is connected.
        let deadline = Date().addingTimeInterval(5)
        while Self.size(of: file) == 0, Date() < deadline, process.isRunning {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// A test that ends before ``finish()`` (it threw) leaves no recorder behind recording forever.
    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: file)
        if let fifoPath { try? FileManager.default.removeItem(atPath: fifoPath) }
    }

    /// How many recording streams (source outputs) `server` has.
    private static func recordingStreams(on server: PulseServer) async -> Int {
        let outputs = await server.pactl(["list", "short", "source-outputs"])
        return outputs.standardOutput.split(separator: "\n").count
    }

    /// True while the recorder (`parec`, or `cat` of a pipe sink) runs: until ``finish()``, unless it failed.
    public var isRecording: Bool { process.isRunning }

    /// Frames recorded so far (parec's buffering puts this up to about 10 ms behind the sink).
    public var framesSoFar: Int { Self.size(of: file) / bytesPerFrame }

    /// Waits until `frames` more frames have been recorded: the sink's own clock, where silence counts too (what a
    /// test waits on to let a pause, or the tail after the last item, be heard). False after `timeout` seconds.
    @discardableResult
    public func waitForFurther(_ frames: Int, timeout: Double = 10) async -> Bool {
        let target = framesSoFar + frames
        let deadline = Date().addingTimeInterval(timeout)
        while framesSoFar < target {
            guard Date() < deadline, process.isRunning else { return false }
            // parec appends a block every few milliseconds: this reads the file as it grows.
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// Records `frames` more frames (the tail still in the server's buffers), then stops and returns the samples.
    public func finish(afterFurther frames: Int) async -> [Int16] {
        await waitForFurther(frames)
        return finish()
    }

    /// Stops recording and returns the interleaved samples.
    public func finish() -> [Int16] {
        // SIGKILL: children spawned from the test runner's threads inherit a mask that blocks SIGINT and SIGTERM.
        // parec and cat write each block with write(2), so nothing recorded is lost.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        if let loadAtStart, let loadNow = MachineLoad.now() { machineLoad = loadNow.since(loadAtStart) }
        let data = (try? Data(contentsOf: file)) ?? Data()
        try? FileManager.default.removeItem(at: file)
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    private static func size(of url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path)[.size]) as? Int) ?? 0
    }
}

extension PulseServer.Kind {
    /// What a monitor recording (`samples`) of `reference` played on this server must hold: all of it; or, on a sink
    /// that rewinds at a stream's start (``rewindsAtStreamStart``), all of it from where the recording's sound
    /// starts, when that is within its first 40 ms. (When the sound is nowhere near, the whole reference: the
    /// comparison that follows then says how they differ.)
    public func expectedRecording(of reference: [Int16], heard samples: [Int16]) -> [Int16] {
        guard rewindsAtStreamStart else { return reference }
        let probe = Array(soundingFrames(samples).prefix(1_024))
        guard probe.count == 1_024, reference.count >= probe.count else { return reference }
        let last = min(1_764, (reference.count - probe.count) / 2)
        for frame in 0...last where Array(reference[(frame * 2)..<(frame * 2 + probe.count)]) == probe {
            return Array(reference.dropFirst(frame * 2))
        }
        return reference
    }

    /// ``expectedRecording(of:heard:)`` of `parts` played back to back, with the frames of that reference where one
    /// part meets the next.
    public func expectedRecording(of parts: [[Int16]], heard samples: [Int16]) -> (reference: [Int16], joins: [Int]) {
        let whole = parts.flatMap { $0 }
        let reference = expectedRecording(of: whole, heard: samples)
        let cut = (whole.count - reference.count) / 2
        return (reference, joinFrames(of: parts).map { $0 - cut })
    }
}

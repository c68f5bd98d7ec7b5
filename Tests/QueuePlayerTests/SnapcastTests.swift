import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// Expects `jumped`, a room's recording matched against `reference`, to hold all of it in order, exact but for its
/// jumps (as many as the caller allowed) and its client's corrections. A jump may skip nothing unless `skipsAllowed`
/// (frames, all jumps together) says otherwise: where snapserver restarted its timeline (0.26 does so when it reads its
/// source more than a chunk, 20 ms, late, which a stall of its own thread causes whatever was sent ahead; on these
/// shared machines the host takes the CPU away for 20-80 ms at times) or a client resynchronised hard and was early,
/// the room hears a gap and then the stream goes on: nothing of ours is lost. With `correctionsBounded`, the
/// corrections are within 0.1% of the frames: a snapclient inserted or dropped at most 42 of the three join items'
/// 198,450 frames in 4 runs alone, and the frames around them must still be exact.
private func expectWhole(
    _ jumped: JumpedMatch, of reference: [Int16], room: String, circumstances: String, skipsAllowed: Int = 0,
    correctionsBounded: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
) {
    let frames = reference.count / 2
    // A resync inserts a gap where the stall was (3,375 to 3,483 frames after a stall of 100 ms, in six rooms), and
    // skips nothing: what was sent is all heard.
    let skipped = jumped.jumps.map(\.skipped)
    #expect(
        jumped.match.lostAtFrame == nil && jumped.accountedFrames == frames && skipped.allSatisfy { $0 >= 0 }
            && skipped.reduce(0, +) <= skipsAllowed,
        "\(room): \(jumped); \(skipsAllowed) frames may be skipped\n\(circumstances)", sourceLocation: sourceLocation)
    if correctionsBounded {
        #expect(
            jumped.match.insertedFrames + jumped.match.droppedFrames <= frames / 1_000,
            "\(room): \(jumped)", sourceLocation: sourceLocation)
    }
}

/// Expects `located`, where `reference` was found in a room's recording `samples` after other sound, to go on to the
/// reference's end as the `expectWhole` above does, with a gap allowed for each hard resync the room's client logged
/// (``SnapcastServer/hardSyncs(room:)``). Its clients have just connected or heard a jump, so their corrections are
/// not bounded.
private func expectWhole(
    _ located: CorrectedMatch, continuedIn samples: [Int16], of reference: [Int16], room: String,
    snapserver: SnapcastServer, circumstances: String, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let jumps = try snapserver.hardSyncs(room: room)
    let jumped = JumpedMatch(continuing: located, in: samples, of: reference, maximumJumps: jumps)
    expectWhole(
        jumped, of: reference, room: room, circumstances: "\(jumps) jumps allowed\n\(circumstances)",
        skipsAllowed: framesSkipped(byLateDrops: try snapserver.lateDrops(room: room)), correctionsBounded: false,
        sourceLocation: sourceLocation)
}

/// Expects `sounding` (a room's sounding frames) to hold all of `reference` as the first `expectWhole` does, but where
/// the room's client said it dropped frames to catch up (``SnapcastServer/lateDrops(room:)``, `lateDrops` in
/// milliseconds): each such drop may skip up to what it said plus one chunk (20 ms, the rest of the chunk it was
/// playing), and nothing else may differ.
private func expectWhole(
    sounding: [Int16], of reference: [Int16], room: String, circumstances: String, lateDrops: [Int],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let jumped = JumpedMatch(recording: sounding, reference: reference, maximumJumps: lateDrops.count)
    expectWhole(
        jumped, of: reference, room: room,
        circumstances: "its client dropped \(lateDrops) ms late\n\(circumstances)",
        skipsAllowed: framesSkipped(byLateDrops: lateDrops), sourceLocation: sourceLocation)
}

/// What a client's drops to catch up may skip, in frames: each what it said (`lateDrops`, in milliseconds) plus one
/// chunk (20 ms, the rest of the chunk it was playing).
private func framesSkipped(byLateDrops lateDrops: [Int]) -> Int {
    lateDrops.reduce(0) { $0 + ($1 + 20) * 44_100 / 1_000 }
}

/// A snapserver with two rooms, and an engine playing `names` into it from when the first one's start is heard.
private struct PlayingInRooms {
    let snapserver: SnapcastServer
    let rooms: Rooms
    let engine: PlaybackEngine
    var events: AsyncStream<PlaybackEvent>.Iterator

    init(_ names: String...) async throws {
        snapserver = try await SnapcastServer(sampleRate: 44_100)
        rooms = try await Rooms(snapserver)
        engine = playing(
            names.map(Fixtures.mp3),
            on: SnapcastSink(host: "127.0.0.1", port: snapserver.sourcePort, sampleRate: 44_100))
        events = engine.events.makeAsyncIterator()
        while let heard = await nextHeard(&events), heard != "start \(names[0])" {}
    }

    /// Snapcast's buffer, in frames.
    var bufferFrames: Int { snapserver.sampleRate * snapserver.bufferMilliseconds / 1_000 }

    /// Waits for the queue's end, then returns each room's recording once the rooms have heard it.
    mutating func finish() async -> [RoomRecording] {
        while let heard = await nextHeard(&events), heard != "queue end" {}
        let recordings = await rooms.finish(snapserver)
        engine.shutdown()
        return recordings
    }
}

/// Two rooms: a private PulseAudio server each, its monitor recorded, and a snapclient playing `snapserver` into it.
private struct Rooms {
    let servers: [PulseServer]
    let recordings: [MonitorRecording]
    let clients: [SnapcastClient]
    static let names = ["room-1", "room-2"]

    init(_ snapserver: SnapcastServer) async throws {
        var servers: [PulseServer] = []
        var recordings: [MonitorRecording] = []
        for name in Self.names {
            let server = try await PulseServer(name: name)
            servers.append(server)
            recordings.append(try await MonitorRecording(server: server))
        }
        self.servers = servers
        self.recordings = recordings
        clients = try await snapserver.connectClients(Array(zip(Self.names, servers)).map { ($0, $1, nil) })
    }

    /// Each room's recording, once Snapcast's buffer and the rooms' own latency have been heard after now, with what
    /// a failure's message needs: whether the room's recorder, client and sound server ran to the end, and the logs.
    func finish(_ snapserver: SnapcastServer) async -> [RoomRecording] {
        let tail = snapserver.sampleRate * (snapserver.bufferMilliseconds + 300) / 1_000
        var heard: [RoomRecording] = []
        for (index, name) in Self.names.enumerated() {
            let recording = recordings[index]
            let tailRecorded = await recording.waitForFurther(tail)
            let running = [
                ("recorder", recording.isRecording), ("client", clients[index].isRunning),
                ("sound server", servers[index].isRunning),
            ]
            let samples = recording.finish()
            let circumstances =
                "\(samples.count / 2) frames recorded, the tail \(tailRecorded ? "whole" : "cut short"); at the end "
                + running.map { "its \($0) \($1 ? "ran" : "had stopped")" }.joined(separator: ", ") + "\n"
                + snapserver.logExcerpt(room: name)
            heard.append((name, samples, circumstances))
        }
        return heard
    }
}

/// What one room heard; `circumstances` says, for a failure's message, what ran to the end and what the logs said.
private typealias RoomRecording = (room: String, samples: [Int16], circumstances: String)

/// Alone: snapserver and two snapclients, each into a PulseAudio server of its own, in real time.
@Suite("Snapcast: a real snapserver and two snapclients, each room a PulseAudio null sink", .tier(.alone), .serialized)
struct SnapcastTests {
    @Test(
        "each room hears every item in order, as decoded, but for the frames its client inserts or drops to keep time",
        .timeLimit(.minutes(1)))
    func roomsHearTheQueue() async throws {
        let snapserver = try await SnapcastServer(sampleRate: 44_100)
        let rooms = try await Rooms(snapserver)
        let names = ["join-1", "join-2", "join-3"]
        let sink = SnapcastSink(host: "127.0.0.1", port: snapserver.sourcePort, sampleRate: 44_100)
        let engine = playing(names.map(Fixtures.mp3), on: sink)
        let played = await events(of: engine, until: { $0 == .queueFinished }, within: .seconds(20))
        let heard = await rooms.finish(snapserver)
        engine.shutdown()
        // A jump is allowed where snapserver logged that it restarted its timeline or a client that it resynchronised
        // hard, and nowhere else.
        let resyncs = try snapserver.resyncs()
        #expect(
            eventNames(played) == [
                "start join-1", "end join-1", "start join-2", "end join-2", "start join-3", "end join-3", "queue end",
            ])
        let reference = try names.flatMap { try Fixtures.referenceInt16($0) }
        for (room, samples, circumstances) in heard {
            let jumps = try resyncs + snapserver.hardSyncs(room: room)
            let jumped = JumpedMatch(recording: samples, reference: reference, maximumJumps: jumps)
            expectWhole(
                jumped, of: reference, room: room, circumstances: "\(jumps) jumps allowed\n\(circumstances)",
                skipsAllowed: framesSkipped(byLateDrops: try snapserver.lateDrops(room: room)))
        }
    }

    /// What a shared machine's host does now and then (20-80 ms), made to happen: snapserver's process stopped for
    /// 100 ms in the middle of an item. It reads late and restarts its timeline; the rooms hear a gap and then the
    /// queue on to its end, exact: the sink neither drops nor reconnects. Whether snapserver's log tells the resync
    /// is not asserted: in one of five fresh-clone runs (under ThreadSanitizer) the rooms heard the same single gap
    /// and the log had no "onResync" (cause not found). A client that resynchronises of its own on a busy machine
    /// adds a gap of its own (under ThreadSanitizer: 280 frames, 1.3 s before the stall's), which skips nothing either.
    @Test(
        "a snapserver that stalls restarts its timeline: the rooms hear a gap, then the queue on, exact",
        .timeLimit(.minutes(1)))
    func stalledServer() async throws {
        var playing = try await PlayingInRooms("stereo-44k-5s", "join-1")
        await playing.rooms.recordings[0].waitForFurther(playing.bufferFrames + 44_100)
        try await playing.snapserver.stall(for: .milliseconds(100))
        let heard = await playing.finish()
        let reference = try ["stereo-44k-5s", "join-1"].flatMap { try Fixtures.referenceInt16($0) }
        for (room, samples, circumstances) in heard {
            let unforgiving = CorrectedMatch(recording: samples, reference: reference)
            #expect(unforgiving.lostAtFrame != nil, "\(room): no jump heard: \(unforgiving)")
            let jumps = try 1 + playing.snapserver.hardSyncs(room: room)
            let jumped = JumpedMatch(recording: samples, reference: reference, maximumJumps: jumps)
            expectWhole(
                jumped, of: reference, room: room, circumstances: "\(jumps) jumps allowed\n\(circumstances)",
                skipsAllowed: framesSkipped(byLateDrops: try playing.snapserver.lateDrops(room: room)))
        }
    }

    /// On resuming, a client resynchronises; one that a busy machine has delayed finds the next chunk already due and
    /// skips ahead (a fresh-clone CI run under AddressSanitizer: room 2 lost the match 2.5 s in, room 1 whole; made
    /// to happen by stopping one client for 150 ms after the resume: it logged a 100 ms drop and skipped 4,414
    /// frames). What a client says it skipped is allowed in its room; every other frame must be heard.
    @Test(
        "a pause reaches both rooms as silence, and play resumes there: nothing lost but what a late client skips",
        .timeLimit(.minutes(1)))
    func pauseReachesBothRooms() async throws {
        var playing = try await PlayingInRooms("stereo-44k-5s")
        // Room 1's sound server keeps the time: 1 s of sound after Snapcast's buffer, then a pause of 1.5 s.
        await playing.rooms.recordings[0].waitForFurther(playing.bufferFrames + 44_100)
        playing.engine.pause()
        await playing.rooms.recordings[0].waitForFurther(66_150)
        playing.engine.play()
        let heard = await playing.finish()
        let reference = soundingFrames(try Fixtures.referenceInt16("stereo-44k-5s"))
        for (room, samples, circumstances) in heard {
            #expect(longestSilence(inside: samples) > 44_100, "\(room): the pause is not heard")
            let drops = try playing.snapserver.lateDrops(room: room)
            expectWhole(
                sounding: soundingFrames(samples), of: reference, room: room, circumstances: circumstances,
                lateDrops: drops)
        }
    }

    /// The time at the pause is Snapcast's buffer and what was sent ahead (up to 30 ms) behind what was sent;
    /// the model's place for the rooms was measured 17 to 19 ms early (scripts/audible-time --snapcast), so the
    /// bound is 50 ms either way. Once the rooms fall silent the time stands on the last frame sent, which they heard
    /// but for their client's corrections (42 frames at most, measured; bound 100).
    @Test(
        "the time is what the rooms hear: it runs on through the buffer after a pause, and stands where they stop",
        .timeLimit(.minutes(1)))
    func timeFollowsTheRooms() async throws {
        var playing = try await PlayingInRooms("stereo-44k-5s")
        await playing.rooms.recordings[0].waitForFurther(44_100)
        playing.engine.pause()
        let atPause = playing.engine.audibleFrame()
        await playing.rooms.recordings[0].waitForFurther(playing.bufferFrames + 22_050)
        let standing = playing.engine.audibleFrame()
        playing.engine.play()
        let heard = await playing.finish()
        let ahead = standing - atPause
        #expect(
            (playing.bufferFrames - 2_205)...(playing.bufferFrames + 1_323 + 2_205) ~= ahead,
            "the time at the pause was \(ahead) frames behind where it stood after")
        for (room, samples, circumstances) in heard {
            let heardBeforePause = splitAtLongestSilence(samples).before.count / 2
            #expect(
                abs(standing - heardBeforePause) <= 100,
                "\(room) heard \(heardBeforePause); time \(standing)\n\(circumstances)")
        }
    }

    @Test(
        "an item that ends in the rooms after a pause is told as it ends there, not at the next play",
        .timeLimit(.minutes(1)))
    func itemEndHeardWhilePaused() async throws {
        var playing = try await PlayingInRooms("join-1", "join-2")
        await playing.rooms.recordings[0].waitForFurther(22_050)
        playing.engine.pause()
        // A deadline, not a wait: the rooms hear join-1 end about a second after the pause. Whoever comes first,
        // the events or the deadline's play, decides.
        let first = Once()
        let engine = playing.engine
        let deadline = Task {
            try? await Task.sleep(for: .seconds(5))
            if first.take() { engine.play() }
        }
        let told = [await nextHeard(&playing.events), await nextHeard(&playing.events)]
        let toldWhilePaused = first.take()
        deadline.cancel()
        #expect(told == ["end join-1", "start join-2"])
        #expect(toldWhilePaused, "told only at the next play")
        playing.engine.play()
        _ = await playing.finish()
    }

    @Test(
        "a snapserver that is not there yet is waited for, and one that restarts is played into again",
        .timeLimit(.minutes(1)))
    func serverAbsentThenRestarting() async throws {
        let port = try LoopbackPort.free()
        let sink = SnapcastSink(host: "127.0.0.1", port: port, sampleRate: 44_100)
        let engine = playing([Fixtures.mp3("stereo-44k-5s"), Fixtures.mp3("join-1")], on: sink)
        var iterator = engine.events.makeAsyncIterator()
        #expect(await nextHeard(&iterator) == "output failed serverUnreachable")
        let snapserver = try await SnapcastServer(sampleRate: 44_100, sourcePort: port)
        #expect(await nextHeard(&iterator) == "output restored")
        #expect(await nextHeard(&iterator) == "start stereo-44k-5s")
        snapserver.stop()
        #expect(await nextHeard(&iterator) == "output failed serverDisconnected")
        try await snapserver.start()
        let rooms = try await Rooms(snapserver)
        #expect(await nextHeard(&iterator) == "output restored")
        var rest: [String] = []
        while let name = await nextHeard(&iterator), name != "queue end" { rest.append(name) }
        let heard = await rooms.finish(snapserver)
        engine.shutdown()
        #expect(rest == ["end stereo-44k-5s", "start join-1", "end join-1"])
        // After the restart the rooms hear the rest of the queue: join-1 whole, to its last frame, but for a gap
        // wherever the room's client resynchronised hard. The clients have just connected and may correct anywhere,
        // also in join-1's first frames.
        let reference = try Fixtures.referenceInt16("join-1")
        for (room, samples, circumstances) in heard {
            let found = try #require(CorrectedMatch.locate(reference, in: samples), "\(room): join-1 is not heard")
            try expectWhole(
                found.match, continuedIn: samples, of: reference, room: room, snapserver: snapserver,
                circumstances: circumstances)
        }
    }

    @Test(
        "a seek reaches both rooms: the old position is heard until Snapcast's buffer runs out, then the new one",
        .timeLimit(.minutes(1)))
    func seekReachesBothRooms() async throws {
        var playing = try await PlayingInRooms("stereo-44k-5s")
        await playing.rooms.recordings[0].waitForFurther(playing.bufferFrames)
        let target = 154_350
        #expect(playing.engine.seek(toFrame: target))
        let heard = await playing.finish()
        let reference = try Fixtures.referenceInt16("stereo-44k-5s")
        let afterSeek = Array(reference[(target * 2)...])
        for (room, samples, circumstances) in heard {
            let before = CorrectedMatch(recording: samples, reference: reference)
            #expect(before.heardFrames > 22_050, "\(room): \(before)")
            let resumed = try #require(
                CorrectedMatch.locate(afterSeek, in: samples), "\(room): the new position is not heard")
            try expectWhole(
                resumed.match, continuedIn: samples, of: afterSeek, room: room, snapserver: playing.snapserver,
                circumstances: circumstances)
        }
    }

    /// Measured in 13 runs alone: the offset held within a run, between 0 and 23 frames (0.5 ms) from run to run.
    /// Beside the parallel suites the clients' sync drifted to 82 frames once: the suite is of the alone tier. In one
    /// run of that tier, among about 25 since, a stretch reached 343 frames; in a fresh-clone CI run the offset went
    /// from -7 to 71 frames over 4 s and settled near 50 (median 49), with no resync of snapserver's; in a run of the
    /// alone tier on a456820 one client drifted from 2 frames to 160 and part of the way back over 7 s; in a CI run on
    /// 4378e88 the rooms were 86 frames apart for 2 s, then 290 for the rest (one client stepped 204 frames at once),
    /// with no resync. Each is a client correcting its own sync, on a machine whose host takes the CPU away for tens
    /// of milliseconds: the source sends both clients the same chunks, so nothing the player does moves one room
    /// and not the other. What the player could get wrong is sending each room its own stream, or one late, which
    /// puts them a chunk (20 ms, 882 frames) or more apart for the whole item. So every point must be within 10 ms
    /// (441 frames, the search's reach, a third of the time sound takes to cross a room of 10 m), but for the two
    /// points around each hard resync a client logged (``SnapcastServer/hardSyncs(room:)``); how close the clients
    /// keep each other is printed.
    @Test(
        "two rooms play in step: within 10 ms of each other all along, measured on one clock", .timeLimit(.minutes(1)),
        .unsanitizable(
            "beside the sanitized process the clients' sync wanders further: alone under ThreadSanitizer the "
                + "median offset of 2 runs in 8 was 32 and 46 frames; of 8 plain runs at most 24"))
    func roomsAgree() async throws {
        let snapserver = try await SnapcastServer(sampleRate: 44_100)
        // One sound server, so that one recording holds both rooms on one clock: each room's client plays into a
        // sink of its own, which PulseAudio maps onto two channels of a four-channel null sink.
        let server = try await PulseServer(name: "rooms")
        let channels = ["front-left", "front-right", "rear-left", "rear-right"]
        _ = await server.pactl([
            "load-module", "module-null-sink", "sink_name=rooms", "rate=44100", "format=s16le", "channels=4",
            "channel_map=" + channels.joined(separator: ","), "norewinds=1",
        ])
        for (room, pair) in [("room-1", channels[0...1]), ("room-2", channels[2...3])] {
            let loaded = await server.pactl([
                "load-module", "module-remap-sink", "sink_name=\(room)", "master=rooms", "channels=2", "remix=no",
                "master_channel_map=" + pair.joined(separator: ","), "channel_map=front-left,front-right",
            ])
            try #require(loaded.status == 0, "\(loaded.standardError)")
        }
        let recording = try await MonitorRecording(server: server, monitor: "rooms.monitor", channelMap: channels)
        let clients = try await snapserver.connectClients([
            ("room-1", server, "room-1"), ("room-2", server, "room-2"),
        ])
        let sink = SnapcastSink(host: "127.0.0.1", port: snapserver.sourcePort, sampleRate: 44_100)
        let engine = playing([Fixtures.mp3("sweep-44k-4s"), Fixtures.mp3("stereo-44k-5s")], on: sink)
        let (_, load) = await MachineLoad.during {
            _ = await events(of: engine, until: { $0 == .queueFinished }, within: .seconds(20))
        }
        let samples = await recording.finish(afterFurther: 44_100 * (snapserver.bufferMilliseconds + 300) / 1_000)
        engine.shutdown()
        withExtendedLifetime(clients) {}
        let offsets = roomOffsets(fourChannels: samples)
        let found = offsets.compactMap { $0 }
        // A resync of snapserver's timeline (a stall of its own) moves both rooms alike: with snapserver stopped for
        // 100 ms mid-item, they stayed within 11 frames of each other (two runs).
        let resyncs = try snapserver.resyncs()
        // A client's hard resync is its own correction, heard in its room alone: a gap of up to 50 ms, or frames
        // dropped to catch up after it fell behind. Each may spoil the two points (100 ms) around it, and no more.
        let hardSyncs = try snapserver.hardSyncs(room: "room-1") + snapserver.hardSyncs(room: "room-2")
        let apart = found.map(abs).sorted()
        let account =
            "snapserver resynced \(resyncs) times, its clients hard \(hardSyncs) times; \(load.inWords)"
        print(
            "rooms apart, frames: median \(apart.isEmpty ? -1 : apart[apart.count / 2]), most \(apart.last ?? -1);"
                + " \(account)")
        #expect(
            found.count >= offsets.count - 2 * hardSyncs && found.count > 100,
            "\(offsets.count - found.count) of \(offsets.count) points beyond 441 frames: \(offsets); \(account)")
    }
}

/// Room 2's offset from room 1 in frames, every 50 ms of a four-channel recording (room 1 on channels 0 and 1, room 2
/// on 2 and 3): where 64 frames of room 1 are found in room 2 within 441 frames either way, or nil. A client's
/// correction (a frame inserted or dropped) spoils a window it falls in: the next of four windows is tried then.
private func roomOffsets(fourChannels samples: [Int16]) -> [Int?] {
    let frames = samples.count / 4
    func room(_ first: Int, at frame: Int) -> (Int16, Int16) {
        (samples[frame * 4 + first], samples[frame * 4 + first + 1])
    }
    func equal(_ frame: Int, shiftedBy shift: Int) -> Bool {
        (0..<64).allSatisfy { room(0, at: frame + $0) == room(2, at: frame + shift + $0) }
    }
    let sounding = (0..<frames).filter { room(0, at: $0) != (0, 0) }
    guard let first = sounding.first, let last = sounding.last, last - first > 2_000 else { return [] }
    return stride(from: first + 441, to: last - 1_000, by: 2_205).map { frame in
        [0, 64, 128, 192].lazy.compactMap { window in
            (0...441).lazy.flatMap { [$0, -$0] }.first { equal(frame + window, shiftedBy: $0) }
        }.first
    }
}

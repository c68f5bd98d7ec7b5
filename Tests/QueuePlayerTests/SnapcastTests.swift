import Foundation
import TestSupport
import Testing

@testable import QueuePlayer

/// The most frames a snapclient inserted or dropped to keep time in a run of the three join items (198,450 frames):
/// 42 in 4 runs alone; 0.1% of the frames played is bound enough, as the frames around them must still be exact.
private func withinCorrections(_ match: CorrectedMatch, of frames: Int) -> Bool {
    match.insertedFrames + match.droppedFrames <= frames / 1_000
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
        clients = try await snapserver.connectClients(Array(zip(Self.names, servers)).map { ($0, $1) })
    }

    /// Each room's recording, once Snapcast's buffer and the rooms' own latency have been heard after now.
    func finish(_ snapserver: SnapcastServer) async -> [(room: String, samples: [Int16])] {
        let tail = snapserver.sampleRate * (snapserver.bufferMilliseconds + 300) / 1_000
        var heard: [(String, [Int16])] = []
        for (name, recording) in zip(Self.names, recordings) {
            heard.append((name, await recording.finish(afterFurther: tail)))
        }
        return heard
    }
}

@Suite("Snapcast: a real snapserver and two snapclients, each room a PulseAudio null sink", .serialized)
struct SnapcastTests {
    @Test(
        "each room hears every item in order, as decoded, but for the frames its client inserts or drops to keep time",
        .timeLimit(.minutes(1)))
    func roomsHearTheQueue() async throws {
        let snapserver = try SnapcastServer(sampleRate: 44_100)
        let rooms = try await Rooms(snapserver)
        let names = ["join-1", "join-2", "join-3"]
        let sink = SnapcastSink(host: "127.0.0.1", port: snapserver.sourcePort, sampleRate: 44_100)
        let engine = playing(names.map(Fixtures.mp3), on: sink)
        let played = await events(of: engine, until: { $0 == .queueFinished }, within: .seconds(20))
        let heard = await rooms.finish(snapserver)
        engine.shutdown()
        #expect(
            eventNames(played) == [
                "start join-1", "end join-1", "start join-2", "end join-2", "start join-3", "end join-3", "queue end",
            ])
        let reference = try names.flatMap { try Fixtures.referenceInt16($0) }
        for (room, samples) in heard {
            let match = CorrectedMatch(recording: samples, reference: reference)
            #expect(
                match.lostAtFrame == nil && match.heardFrames + match.droppedFrames == reference.count / 2,
                "\(room): \(match)")
            #expect(withinCorrections(match, of: reference.count / 2), "\(room): \(match)")
        }
    }

    @Test(
        "a pause reaches both rooms as silence, and play resumes there without losing a frame",
        .timeLimit(.minutes(1)))
    func pauseReachesBothRooms() async throws {
        let snapserver = try SnapcastServer(sampleRate: 44_100)
        let rooms = try await Rooms(snapserver)
        let sink = SnapcastSink(host: "127.0.0.1", port: snapserver.sourcePort, sampleRate: 44_100)
        let engine = playing([Fixtures.mp3("stereo-44k-5s")], on: sink)
        var iterator = engine.events.makeAsyncIterator()
        while let name = await nextHeard(&iterator), name != "start stereo-44k-5s" {}
        // Room 1's sound server keeps the time: 1 s of sound after Snapcast's buffer, then a pause of 1.5 s.
        let buffer = snapserver.sampleRate * snapserver.bufferMilliseconds / 1_000
        await rooms.recordings[0].waitForFurther(buffer + 44_100)
        engine.pause()
        await rooms.recordings[0].waitForFurther(66_150)
        engine.play()
        while let name = await nextHeard(&iterator), name != "queue end" {}
        let heard = await rooms.finish(snapserver)
        engine.shutdown()
        let reference = soundingFrames(try Fixtures.referenceInt16("stereo-44k-5s"))
        for (room, samples) in heard {
            #expect(longestSilence(inside: samples) > 44_100, "\(room): the pause is not heard")
            let match = CorrectedMatch(recording: soundingFrames(samples), reference: reference)
            #expect(
                match.lostAtFrame == nil && match.heardFrames + match.droppedFrames == reference.count / 2,
                "\(room): \(match)")
            #expect(withinCorrections(match, of: reference.count / 2), "\(room): \(match)")
        }
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
        let snapserver = try SnapcastServer(sampleRate: 44_100, sourcePort: port)
        #expect(await nextHeard(&iterator) == "output restored")
        #expect(await nextHeard(&iterator) == "start stereo-44k-5s")
        snapserver.stop()
        #expect(await nextHeard(&iterator) == "output failed serverDisconnected")
        try snapserver.start()
        let rooms = try await Rooms(snapserver)
        #expect(await nextHeard(&iterator) == "output restored")
        var rest: [String] = []
        while let name = await nextHeard(&iterator), name != "queue end" { rest.append(name) }
        let heard = await rooms.finish(snapserver)
        engine.shutdown()
        #expect(rest == ["end stereo-44k-5s", "start join-1", "end join-1"])
        // After the restart the rooms hear the rest of the queue: join-1 whole, to its last frame.
        let reference = try Fixtures.referenceInt16("join-1")
        for (room, samples) in heard {
            let start = try #require(offset(of: reference, in: samples), "\(room): join-1 is not heard")
            let match = CorrectedMatch(recording: Array(samples[(start * 2)...]), reference: reference)
            #expect(
                match.lostAtFrame == nil && match.heardFrames + match.droppedFrames == reference.count / 2,
                "\(room): \(match)")
        }
    }
}

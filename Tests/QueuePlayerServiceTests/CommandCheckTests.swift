import Foundation
import QueuePlayer
import QueuePlayerControl
import QueuePlayerService
import TestSupport
import TestTiers
import Testing

/// Commands check before they act, reads change nothing, and only changes are saved and told.
@Suite("Commands check before they act; reads are pure", .tier(.deterministic), .timeLimit(.minutes(1)))
struct CommandCheckTests {
    static let badFiles = [
        ("not MP3", Fixtures.mp3("not-audio").path, "not an MP3 file"),
        ("empty", Fixtures.mp3("empty").path, "empty"),
        ("missing", "/nonexistent/song.mp3", "no such file"),
        ("not audio at all", "/etc/hostname", "not an MP3 file"),
    ]

    @Test(
        "open, add and insert of a bad file fail naming it, and leave the queue and playback untouched",
        arguments: badFiles)
    func badFileIsRefused(_ kind: String, path: String, reason: String) throws {
        let service = try ServiceHarness()
        let ids = service.add("join-1", "join-2")
        let before = (service.controller.queue(), service.status)
        let commands: [ControlCommand] = [
            .open(path), .add([path]), .insert([path], after: ids[0]),
            .add([Fixtures.mp3("join-3").path, path]),
        ]
        for command in commands {
            let reply = service.run(command)
            #expect(reply.ok == false, "\(kind): \(command) was accepted")
            #expect(reply.error?.contains(path) == true, "\(kind): \(reply.error ?? "no error")")
            #expect(reply.error?.contains(reason) == true, "\(kind): \(reply.error ?? "no error")")
            #expect(service.controller.queue() == before.0)
            #expect(service.status == before.1)
        }
    }

    @Test("reads write nothing to the store and tell no subscriber; a change is told once, a non-change never")
    func readsArePure() async throws {
        let service = try ServiceHarness()
        service.add("join-1", "join-2")
        let changes = service.controller.changes()
        var told = changes.makeAsyncIterator()
        _ = await told.next()  // The snapshot a subscription starts with.
        let rowsBefore = try service.store.rowsChanged()
        for _ in 0..<200 {
            for read: ControlCommand in [
                .status, .metadata, .queue, .position(nil, relative: false),
                .volume(nil, relative: false),
            ] {
                #expect(service.run(read).ok == true)
            }
            _ = service.controller.snapshot()
            service.controller.checkpoint()  // Paused: the position does not move, so nothing is written.
        }
        #expect(try service.store.rowsChanged() == rowsBefore)

        service.run(.volume(0.5, relative: false))
        service.run(.volume(0.5, relative: false))  // No change: no event, no write.
        let rowsAfterVolume = try service.store.rowsChanged()
        service.run(.volume(0.5, relative: false))
        #expect(try service.store.rowsChanged() == rowsAfterVolume)
        service.run(.volume(0.25, relative: false))
        #expect(await told.next()?.volume == 0.5)
        #expect(await told.next()?.volume == 0.25, "an unchanged volume was told as an event")
    }
}

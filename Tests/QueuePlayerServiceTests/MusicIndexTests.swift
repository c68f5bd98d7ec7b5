import Foundation
import Logging
import QueuePlayer
import QueuePlayerService
import TestSupport
import TestTiers
import Testing

/// The music folder's index: what an update finds, reads again and drops, what it skips, that it is kept in the
/// state store, and the events it tells. Each test waits for its jobs' events, never for time.
@Suite("The music folder's index", .tier(.deterministic), .timeLimit(.minutes(1)))
struct MusicIndexTests {
    /// A music folder: two songs in `Mornings/` with a cover file, one untagged at the top, a file that is not an MP3
    /// named `.mp3`, a text file, a hidden folder, and a link back to the top (which must not loop).
    static func makeFolder() throws -> String {
        let folder = Scratch.newFolder("music")
        let files = [
            ("Mornings/one.mp3", "tagged-v24"), ("Mornings/two.mp3", "tagged-v23"), ("plain.mp3", "stereo-44k-5s"),
            ("broken.mp3", "not-audio"), (".hidden/secret.mp3", "id3v1"),
        ]
        for (path, fixture) in files {
            let destination = "\(folder)/\(path)"
            try FileManager.default.createDirectory(
                atPath: (destination as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Fixtures.mp3(fixture).path, toPath: destination)
        }
        try "not music".write(toFile: "\(folder)/notes.txt", atomically: true, encoding: .utf8)
        try "a cover".write(toFile: "\(folder)/Mornings/cover.jpg", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: "\(folder)/Mornings/loop", withDestinationPath: folder)
        return folder
    }

    /// An index of `folder` in `store`, and its events as they come.
    static func makeIndex(
        _ folder: String, store: StateStore
    ) -> (MusicIndex, AsyncStream<MusicIndex.Event>.AsyncIterator) {
        let (events, tell) = AsyncStream.makeStream(of: MusicIndex.Event.self)
        let index = MusicIndex(
            folder: MPDMusicFolder(path: folder), store: store, logger: Logger(label: "test.index")
        ) { tell.yield($0) }
        return (index, events.makeAsyncIterator())
    }

    @Test("the first update finds every MP3 with its tags and length, skipping what cannot play and hidden names")
    func firstUpdate() async throws {
        let folder = try Self.makeFolder()
        let store = try StateStore()
        let made = Self.makeIndex(folder, store: store)
        let index = made.0
        var events = made.1
        #expect(index.current.updated == nil, "never indexed")
        index.updateIfNeverIndexed()
        #expect(await events.next() == .started(id: 1))
        #expect(await events.next() == .finished(id: 1, changed: true))
        let contents = index.current
        #expect(Set(contents.songs.keys) == ["Mornings/one.mp3", "Mornings/two.mp3", "plain.mp3"])
        #expect(contents.songs["Mornings/one.mp3"]?.description.metadata.albumArtist == "Various")
        #expect(contents.songs["plain.mp3"]?.description.frameCount == 220_500)
        // MPD's order: a song without a disc number before one with (two.mp3 has track 2 only, one.mp3 disc 1).
        #expect(contents.orderedSongs.map(\.path) == ["plain.mp3", "Mornings/two.mp3", "Mornings/one.mp3"])
        #expect(contents.isFolder("Mornings") && !contents.isFolder("Mornings/loop") && !contents.isFolder(".hidden"))
        #expect(contents.updated != nil)

        index.updateIfNeverIndexed()
        #expect(index.runningJob == nil, "indexed once: not again")
        let reopened = Self.makeIndex(folder, store: store).0
        #expect(reopened.current.songs == contents.songs, "kept in the store")
        let elsewhere = Self.makeIndex(Scratch.newFolder("other"), store: store).0
        #expect(elsewhere.current.updated == nil, "an index of another folder is not this one's")
    }

    /// Waits for the next job that changed the index.
    private static func nextChange(_ events: inout AsyncStream<MusicIndex.Event>.AsyncIterator) async {
        while let event = await events.next() {
            if case .finished(_, changed: true) = event { return }
        }
    }

    /// Each change is waited for as the index's jobs tell it: a copy may be seen half written first, and read again
    /// once it is closed.
    @Test("followed, the folder's changes reach the index by themselves: a song copied in, a new folder, a removal")
    func followsTheFolder() async throws {
        let folder = try Self.makeFolder()
        let made = Self.makeIndex(folder, store: try StateStore())
        let index = made.0
        var events = made.1
        index.updateIfNeverIndexed()
        await Self.nextChange(&events)
        let watch = try #require(
            MusicFolderWatch(root: folder, delay: .milliseconds(50), logger: Logger(label: "test.watch")) { folders in
                for folder in folders { _ = try? index.update(folder, rereadingAll: false) }
            })
        watch.start()
        defer { watch.stop() }
        func frames(_ path: String) -> Int? { index.current.songs[path]?.description.frameCount }
        try FileManager.default.copyItem(atPath: Fixtures.mp3("join-1").path, toPath: "\(folder)/Mornings/three.mp3")
        while frames("Mornings/three.mp3") != 66_150 { await Self.nextChange(&events) }
        try FileManager.default.createDirectory(atPath: "\(folder)/Evenings", withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: Fixtures.mp3("join-2").path, toPath: "\(folder)/Evenings/one.mp3")
        while frames("Evenings/one.mp3") != 66_150 { await Self.nextChange(&events) }
        try FileManager.default.removeItem(atPath: "\(folder)/plain.mp3")
        while frames("plain.mp3") != nil { await Self.nextChange(&events) }
        let songs: Set = ["Mornings/one.mp3", "Mornings/two.mp3", "Mornings/three.mp3", "Evenings/one.mp3"]
        #expect(Set(index.current.songs.keys) == songs)
    }

    @Test("an update reads again only changed files and drops the removed; a rescan reads all; a path limits it")
    func laterUpdates() async throws {
        let folder = try Self.makeFolder()
        let made = Self.makeIndex(folder, store: try StateStore())
        let index = made.0
        var events = made.1
        #expect(try index.update("", rereadingAll: false) == 1)
        _ = await events.next()
        _ = await events.next()

        #expect(try index.update("", rereadingAll: false) == 2)
        #expect(await events.next() == .started(id: 2))
        #expect(await events.next() == .finished(id: 2, changed: false), "nothing changed on disk")

        try FileManager.default.removeItem(atPath: "\(folder)/plain.mp3")
        try FileManager.default.removeItem(atPath: "\(folder)/Mornings/two.mp3")
        try FileManager.default.copyItem(
            atPath: Fixtures.mp3("id3v1-full").path, toPath: "\(folder)/Mornings/two.mp3")
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: "\(folder)/Mornings/two.mp3")
        #expect(try index.update("Mornings", rereadingAll: false) == 3)
        _ = await events.next()
        #expect(await events.next() == .finished(id: 3, changed: true))
        #expect(index.current.songs["Mornings/two.mp3"]?.description.metadata.title == "Plain", "read again")
        #expect(index.current.songs["plain.mp3"] != nil, "outside the path updated: left as it was")

        #expect(try index.update("", rereadingAll: true) == 4)
        _ = await events.next()
        #expect(await events.next() == .finished(id: 4, changed: true), "a rescan reads every file again")
        #expect(Set(index.current.songs.keys) == ["Mornings/one.mp3", "Mornings/two.mp3"])
    }
}

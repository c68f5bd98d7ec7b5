import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayerService

@Suite("Whole files read for the front ends", .tier(.deterministic))
struct FileContentsTests {
    private let folder = Scratch.uniquePath("file-contents")

    init() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    @Test("an empty file reads as no bytes, a missing one or a folder as nothing, any other as its bytes")
    func reads() throws {
        try Data().write(to: URL(fileURLWithPath: "\(folder)/empty.m3u"))
        try Data("a.mp3\n".utf8).write(to: URL(fileURLWithPath: "\(folder)/one.m3u"))
        #expect(FileContents.bytes(atPath: "\(folder)/empty.m3u") == [])
        #expect(FileContents.bytes(atPath: "\(folder)/one.m3u") == Array("a.mp3\n".utf8))
        #expect(FileContents.bytes(atPath: "\(folder)/missing.m3u") == nil)
        #expect(FileContents.bytes(atPath: folder) == nil)
    }

    @Test("an empty stored playlist lists no songs; a missing one is no such playlist")
    func emptyStoredPlaylist() throws {
        let playlists = MPDStoredPlaylists(folder: folder)
        try playlists.write("quiet", songs: [], creating: true)
        #expect(try playlists.songs("quiet").isEmpty)
        #expect(throws: MPDError.self) { try playlists.songs("absent") }
    }
}

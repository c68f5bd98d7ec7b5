import Foundation
import Glibc
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

@Suite("BufferedFileReader: libmpg123's reads through a buffer, as read(2) and lseek(2) behave", .tier(.deterministic))
struct BufferedFileReaderTests {
    /// A temporary file of `count` bytes whose contents differ at every offset; the caller removes it.
    private func makeFile(count: Int) throws -> (URL, [UInt8]) {
        // The high bits of a multiplicative hash: no period a wrong offset could hide in.
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        let url = Subprocess.temporaryFile("bin")
        try Data(bytes).write(to: url)
        return (url, bytes)
    }

    private func read(_ reader: BufferedFileReader, count: Int) -> (Int, [UInt8]) {
        var storage = [UInt8](repeating: 0, count: max(count, 1))
        let got = storage.withUnsafeMutableBytes { reader.read(into: $0.baseAddress!, count: count) }
        return (got, Array(storage.prefix(max(got, 0))))
    }

    @Test("reads of every size after seeks of every kind return exactly the file's bytes, across refills")
    func matchesTheFile() throws {
        let (url, bytes) = try makeFile(count: 3 * BufferedFileReader.bufferBytes + 1_234)
        defer { try? FileManager.default.removeItem(at: url) }
        let reader = try #require(BufferedFileReader(path: url.path))
        var position = 0
        var random = SeededGenerator(state: 13)
        // Sizes as libmpg123 asks for them (a 4-byte header, a frame body), and larger than the buffer.
        let sizes = [1, 3, 4, 417, 627, 1_044, 65_535, 65_536, 70_000]
        for step in 0..<2_000 {
            if step % 7 == 0 {
                let whence = [SEEK_SET, SEEK_CUR, SEEK_END][Int.random(in: 0..<3, using: &random)]
                let base = whence == SEEK_SET ? 0 : (whence == SEEK_CUR ? position : bytes.count)
                let target = Int.random(in: 0...bytes.count + 100, using: &random)
                #expect(reader.seek(to: target - base, whence: whence) == target)
                position = target
            }
            let size = sizes[Int.random(in: 0..<sizes.count, using: &random)]
            let (got, data) = read(reader, count: size)
            let expected = Array(bytes[min(position, bytes.count)..<min(position + size, bytes.count)])
            #expect(got == expected.count && data == expected, "read of \(size) at \(position)")
            position += max(got, 0)
        }
    }

    @Test("at the end a read returns 0; a seek before the start or with an unknown whence fails with EINVAL")
    func edges() throws {
        let (url, bytes) = try makeFile(count: 1_000)
        defer { try? FileManager.default.removeItem(at: url) }
        let reader = try #require(BufferedFileReader(path: url.path))
        #expect(reader.seek(to: -10, whence: SEEK_END) == 990)
        #expect(read(reader, count: 100).0 == 10)
        #expect(read(reader, count: 100).0 == 0)
        #expect(reader.seek(to: 5_000, whence: SEEK_SET) == 5_000)
        #expect(read(reader, count: 4).0 == 0)
        #expect(reader.seek(to: -1, whence: SEEK_SET) == -1 && errno == EINVAL)
        #expect(reader.seek(to: 0, whence: 99) == -1 && errno == EINVAL)
        #expect(reader.seek(to: 0, whence: SEEK_SET) == 0)
        #expect(read(reader, count: 4).1 == Array(bytes.prefix(4)))
        #expect(BufferedFileReader(path: url.path + ".missing") == nil && errno == ENOENT)
    }

    /// The descriptors this process holds open on `url`.
    private func descriptors(on url: URL) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter { descriptor in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")) == url.path
        }.count
    }

    @Test(
        "every file a decoder opens is closed with it: played, scanned, checked, or refused as not MPEG audio",
        arguments: ["stereo-44k-5s", "rate-change", "not-audio"])
    func closesWhatItOpens(fixture: String) throws {
        // A copy of its own, so that no test running beside this one holds the same file open.
        let url = Subprocess.temporaryFile("mp3")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(contentsOf: Fixtures.mp3(fixture)).write(to: url)
        for _ in 0..<50 {
            _ = try? MPG123Decoder.check(url)
            if let decoder = try? MPG123Decoder(url: url, logger: quietLogger) {
                #expect(try descriptors(on: url) >= 1, "the decoder reads the file while it lives")
                _ = decodeAll(decoder)
            }
        }
        #expect(try descriptors(on: url) == 0)
    }
}

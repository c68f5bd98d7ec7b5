import Glibc

/// Reads a file through a buffer of its own, for libmpg123's reader callbacks (`read` and `lseek` as POSIX has them).
///
/// libmpg123's own reader makes two `read` calls per MP3 frame, one for its 4-byte header and one for its body: 77
/// system calls for each second of a 192 kbps item, 46,000 to decode ten minutes. This reader refills
/// ``bufferBytes`` at a time with `pread` at its own position, so a seek inside the buffer costs nothing and one
/// outside it only moves the position. It does not map the file: a file cut short while mapped would end the
/// process with SIGBUS, where a read just comes up short.
///
/// Why the raw pointers are safe: `buffer` is one allocation of ``bufferBytes``, made at init and freed in `deinit`;
/// every copy out of it stays within the bytes the last `pread` filled, and every copy into the caller's memory stays
/// within the `count` the caller gave. Threading: one thread at a time (libmpg123 calls it on the thread that uses
/// the handle); not `Sendable`.
final class BufferedFileReader: ByteSource {
    /// How much one refill reads.
    static let bufferBytes = 65_536

    private let descriptor: Int32
    private let buffer: UnsafeMutableRawPointer
    /// The file offset of the buffer's first byte, and how many bytes from there it holds.
    private var bufferOffset = 0
    private var bufferCount = 0
    /// The file offset of the next byte to deliver.
    private var position = 0

    /// Opens `path` for reading; nil when it cannot be opened, with `errno` saying why.
    init?(path: String) {
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        buffer = .allocate(byteCount: Self.bufferBytes, alignment: 16)
    }

    /// A file's failures are told by `errno`.
    var failure: DecoderError? { nil }

    /// The file's size now, by `fstat(2)`.
    var length: Int? {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? Int(status.st_size) : nil
    }

    deinit {
        close(descriptor)
        buffer.deallocate()
    }

    /// Copies up to `count` bytes from the position into `destination` and moves past them, as `read(2)` does:
    /// fewer only at the end of the file; -1 (with `errno`) when the file cannot be read and nothing was copied.
    func read(into destination: UnsafeMutableRawPointer, count: Int) -> Int {
        var delivered = 0
        while delivered < count {
            let buffered = bufferOffset + bufferCount - position
            if position >= bufferOffset, buffered > 0 {
                let piece = min(count - delivered, buffered)
                (destination + delivered).copyMemory(from: buffer + (position - bufferOffset), byteCount: piece)
                position += piece
                delivered += piece
                continue
            }
            let wanted = count - delivered
            if wanted >= Self.bufferBytes {
                // Larger than the buffer: straight into the caller's memory.
                let got = readFully(into: destination + delivered, count: wanted, at: position)
                guard got > 0 else { return delivered > 0 ? delivered : got }
                position += got
                delivered += got
                continue
            }
            let got = readFully(into: buffer, count: Self.bufferBytes, at: position)
            guard got > 0 else {
                bufferCount = 0
                return delivered > 0 ? delivered : got
            }
            bufferOffset = position
            bufferCount = got
        }
        return delivered
    }

    /// Moves the position as `lseek(2)` does (`SEEK_SET`, `SEEK_CUR`, `SEEK_END`) and returns it; -1 with `errno` for
    /// another `whence` or a position before the start.
    func seek(to offset: Int, whence: Int32) -> Int {
        let target = seekTarget(offset: offset, whence: whence, from: position)
        if target >= 0 { position = target }
        return target
    }

    /// `pread` at `offset`, again after an interruption: bytes read, 0 at the end of the file, or -1.
    private func readFully(into destination: UnsafeMutableRawPointer, count: Int, at offset: Int) -> Int {
        while true {
            let got = pread(descriptor, destination, count, off_t(offset))
            if got >= 0 || errno != EINTR { return got }
        }
    }
}

import Glibc

/// Where libmpg123 reads an item's bytes from: a local file (``BufferedFileReader``) or an HTTP body
/// (``HTTPByteSource``). The calls are libmpg123's reader callbacks, with POSIX `read` and `lseek` semantics.
///
/// Threading: one thread at a time, the thread that uses the decoder's handle; implementations are not `Sendable`.
protocol ByteSource: AnyObject {
    /// Copies up to `count` bytes from the position into `destination` and moves past them, as `read(2)` does: 0 at
    /// the end, -1 when nothing could be read (``failure`` then says why, when the source knows better than `errno`).
    /// May block until bytes arrive.
    func read(into destination: UnsafeMutableRawPointer, count: Int) -> Int
    /// Moves the position as `lseek(2)` does and returns it; -1 when the source cannot move there.
    func seek(to offset: Int, whence: Int32) -> Int
    /// Why the last `read` or `seek` returned -1, named for the user; nil when `errno` says it.
    var failure: DecoderError? { get }
    /// How many bytes the source holds in all; nil, with `errno` set, when that is not known (a live stream).
    var length: Int? { get }
    /// Takes the titles a stream's server sent (ICY `StreamTitle`) for bytes up to `offset`, oldest first.
    func takeTitles(through offset: Int) -> [String]
    /// Takes the gaps in a live stream (seconds missed while it was reconnected) before bytes up to `offset`.
    func takeGaps(through offset: Int) -> [Double]
}

extension ByteSource {
    /// A file has no stream titles.
    func takeTitles(through offset: Int) -> [String] { [] }

    /// A file has no gaps.
    func takeGaps(through offset: Int) -> [Double] { [] }

    /// Where `lseek(2)` moves from `position`: `offset` from the start (`SEEK_SET`), from `position` (`SEEK_CUR`)
    /// or from the end (`SEEK_END`, at ``length``). -1 with `errno` for another `whence`, an unknown length, or a
    /// target before the start.
    func seekTarget(offset: Int, whence: Int32, from position: Int) -> Int {
        let base: Int
        switch whence {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = position
        case SEEK_END:
            guard let length else { return -1 }
            base = length
        default:
            errno = EINVAL
            return -1
        }
        let (target, overflow) = base.addingReportingOverflow(offset)
        guard !overflow, target >= 0 else {
            errno = EINVAL
            return -1
        }
        return target
    }
}

/// The object libmpg123's reader callbacks receive as their handle: one class, so that the callbacks, which cannot
/// be generic, reach any ``ByteSource`` through `Unmanaged` without a dynamic cast on each read.
final class ByteSourceHandle {
    let source: any ByteSource

    init(_ source: any ByteSource) {
        self.source = source
    }
}

import Glibc
import Synchronization

/// A lock-free ring of interleaved Float32 samples with exactly one producer thread and one consumer thread.
///
/// Indices count samples since the ring was made and only grow, so `write - read` is the fill level and no index
/// ever wraps in practice (2^63 samples). The producer alone moves `write`; the consumer alone moves `read`.
///
/// Why `@unchecked Sendable` and raw memory are safe here: `storage` is one fixed allocation, freed in `deinit`.
/// The producer touches only the free region `[write, read + capacity)` and publishes it with a releasing store of
/// `write`; the consumer touches only `[read, write)`, loaded with an acquiring load, and hands the region back with
/// a releasing store of `read`, which the producer loads acquiring. No sample is ever visible to both at once.
/// Nothing here allocates or locks after `init`, so the consumer side is safe on the audio callback path.
///
/// The producer may also take back samples it wrote and the consumer has not read (``truncate(at:readReach:)``):
/// it first lowers `readLimit`, which every read looks at after a sequentially consistent fence, so that a read
/// either sees the limit or was seen by the producer (how far it may reach) before it moves `write` back.
final class SampleRing: @unchecked Sendable {
    /// Samples the ring holds; a power of two.
    let capacity: Int
    private let mask: Int
    private let storage: UnsafeMutablePointer<Float>
    private let writeIndex = Atomic<Int>(0)
    private let readIndex = Atomic<Int>(0)
    /// Where reads stop while the producer truncates; `Int.max` otherwise.
    private let readLimit = Atomic<Int>(.max)

    /// Allocates a ring of at least `minimumCapacity` samples (rounded up to a power of two).
    init(minimumCapacity: Int) {
        var size = 1
        while size < minimumCapacity { size <<= 1 }
        capacity = size
        mask = size - 1
        // calloc: the samples start at 0.0 without being written here, since large blocks come as zeroed pages from
        // the kernel; pages the decoder has not reached cost neither time nor memory (zeroing them one by one took
        // 0.3 ms of every start, on the way to the first sound).
        guard let memory = calloc(size, MemoryLayout<Float>.stride) else {
            fatalError("no memory for a sample ring of \(size) samples")
        }
        storage = memory.bindMemory(to: Float.self, capacity: size)
    }

    deinit {
        free(storage)
    }

    // MARK: Producer side (one thread)

    /// Total samples written so far. Exact on the producer thread; a lower bound elsewhere.
    var producedCount: Int { writeIndex.load(ordering: .acquiring) }

    /// Samples the producer may write now.
    var freeCount: Int { capacity - (writeIndex.load(ordering: .relaxed) - readIndex.load(ordering: .acquiring)) }

    /// Hands `body` the largest contiguous free region, of at most `maximum` samples, and publishes the first `n`
    /// samples it reports written. Producer thread only. Returns `n`.
    @discardableResult
    func write(maximum: Int = .max, _ body: (inout MutableSpan<Float>) -> Int) -> Int {
        let write = writeIndex.load(ordering: .relaxed)
        let free = capacity - (write - readIndex.load(ordering: .acquiring))
        let start = write & mask
        let contiguous = min(free, capacity - start, maximum)
        guard contiguous > 0 else { return 0 }
        let region = UnsafeMutableBufferPointer(start: storage + start, count: contiguous)
        var span = region.mutableSpan
        let written = body(&span)
        precondition((0...contiguous).contains(written), "a ring writer reported more samples than it was given")
        writeIndex.store(write + written, ordering: .releasing)
        return written
    }

    /// Takes back the samples written from index `index` on, so that the next write goes there, unless a read may
    /// reach them: one that has, or one under way up to `readReach()` (read after the fence: the consumer stores
    /// how far its reads may reach before its own fence). True when taken back, or nothing was written from there.
    /// Producer thread only.
    func truncate(at index: Int, readReach: () -> Int) -> Bool {
        let write = writeIndex.load(ordering: .relaxed)
        guard index < write else { return index == write }
        readLimit.store(index, ordering: .sequentiallyConsistent)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        let mayReach = max(readIndex.load(ordering: .sequentiallyConsistent), readReach()) > index
        if !mayReach { writeIndex.store(index, ordering: .releasing) }
        readLimit.store(.max, ordering: .releasing)
        return !mayReach
    }

    // MARK: Consumer side (one thread)

    /// The index reads stop at: what was written, and no further than a truncation under way allows. The fence
    /// pairs with the one in ``truncate(at:readReach:)``.
    private var readEnd: Int {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        let limit = readLimit.load(ordering: .acquiring)
        return min(limit, writeIndex.load(ordering: .acquiring))
    }

    /// Total samples consumed (read or skipped) so far.
    var consumedCount: Int { readIndex.load(ordering: .acquiring) }

    /// Samples ready for the consumer.
    var readableCount: Int { readEnd - readIndex.load(ordering: .relaxed) }

    /// Passes up to `maximum` readable samples to `body` in at most two contiguous pieces, in order, then releases
    /// them to the producer. Consumer thread only; does not allocate. Returns the samples consumed.
    @discardableResult
    func read(maximum: Int, _ body: (Span<Float>) -> Void) -> Int {
        let read = readIndex.load(ordering: .relaxed)
        let count = min(maximum, readEnd - read)
        guard count > 0 else { return 0 }
        let start = read & mask
        let first = min(count, capacity - start)
        body(UnsafeBufferPointer(start: storage + start, count: first).span)
        if first < count {
            body(UnsafeBufferPointer(start: storage, count: count - first).span)
        }
        readIndex.store(read + count, ordering: .releasing)
        return count
    }

    /// Converts up to `destination.count - offset` readable samples, multiplied by `gain`, into `destination` from
    /// `offset` on, and releases them to the producer. Consumer thread only; no allocation. A gain of 1 changes no
    /// bit. Returns the samples consumed.
    func read<Sample: PCMSample>(into destination: inout MutableSpan<Sample>, from offset: Int, gain: Float) -> Int {
        let read = readIndex.load(ordering: .relaxed)
        let count = min(destination.count - offset, readEnd - read)
        guard count > 0 else { return 0 }
        let start = read & mask
        let first = min(count, capacity - start)
        destination.withUnsafeMutableBufferPointer { output in
            let target = output.baseAddress! + offset
            Self.convert(storage + start, into: target, count: first, gain: gain)
            Self.convert(storage, into: target + first, count: count - first, gain: gain)
        }
        readIndex.store(read + count, ordering: .releasing)
        return count
    }

    /// `target[i] = Sample(source[i] * gain)` for `i` in `0..<count`. Both pointers are offset once, outside the loop,
    /// so its indices cannot overflow and the compiler vectorises it (with an index sum inside, its overflow check
    /// kept the loop scalar: 6.6% of the CPU of an unpaced decode).
    @inline(__always)
    private static func convert<Sample: PCMSample>(
        _ source: UnsafePointer<Float>, into target: UnsafeMutablePointer<Sample>, count: Int, gain: Float
    ) {
        for index in 0..<count { target[index] = Sample(decoded: source[index] * gain) }
    }

    /// Drops readable samples up to index `target` (never past what was written). Consumer thread only.
    func skip(to target: Int) {
        let read = readIndex.load(ordering: .relaxed)
        let end = min(target, readEnd)
        if end > read {
            readIndex.store(end, ordering: .releasing)
        }
    }
}

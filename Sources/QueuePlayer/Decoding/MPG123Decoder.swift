import CMpg123
import FoundationEssentials
import Glibc
import Logging

/// Decodes an MP3 (MPEG-1, 2 and 2.5 layer III, and layers I and II) with libmpg123: a local file, or a file on an
/// `http` or `https` server, fetched as it plays (``HTTPByteSource``).
///
/// - Gapless: LAME/Xing encoder delay and padding are removed, so a 5.000 s item at 44.1 kHz is 220,500 frames.
/// - Exact length before the first frame: from the LAME/Xing header, or (for local files without one) from a scan of
///   the whole file at open, so ``frameCount`` is exact for VBR too. A remote file without the header is not
///   scanned (that would fetch all of it first): its length is libmpg123's estimate from its size.
/// - Mono items are delivered as stereo (libmpg123 duplicates the channel), in Float32 at the file's own rate.
/// - Garbage between frames is skipped (libmpg123 resynchronises); each skip is logged as a warning naming the
///   file and the byte offset, and counted in ``skippedBytes``.
///
/// This is the only file that imports libmpg123, and the unsafe pointers below are libmpg123's own buffers: the
/// frame pointer returned by `mpg123_decode_frame` stays valid until the next call on the same handle, and the
/// handle is used by one thread at a time (the type is not `Sendable`). The bytes are read through a ``ByteSource``
/// that the handle owns (see ``open(_:reading:on:)``).
package final class MPG123Decoder: AudioDecoder {
    /// The file being decoded.
    package let url: URL
    /// The file's sample rate, always as stereo Float32.
    package let format: AudioFormat
    /// The exact gapless length: from the LAME/Xing header when there is one, else from a full scan at init. A
    /// truncated file decodes fewer frames, and ``decode(into:)`` then reports it.
    package let frameCount: Int
    /// True for a live stream (a remote item of unknown length that is not a file): `Int.max` frames.
    package let isLive: Bool
    /// ID3v2 tags, with ID3v1 filling what ID3v2 lacks; a stream's station name.
    package private(set) var metadata: ItemMetadata
    /// Bytes of garbage skipped so far while resynchronising.
    package private(set) var skippedBytes = 0
    /// A remote item's forward buffer; nil for a local file.
    package let forwardBuffer: ForwardBuffer?
    /// False for a live stream, and for a remote file whose server does not answer `Range` requests.
    package let isSeekable: Bool
    /// The bit rate of the MPEG audio, in bits a second (see ``dataRate(of:audioBytes:frameCount:sampleRate:)``).
    package let estimatedDataRate: Int?

    private let handle: OpaquePointer
    private let source: any ByteSource
    /// The source of a remote item; nil for a local file.
    private let remoteSource: HTTPByteSource?
    private let logger: Logger
    /// False when the length came from a scan of the file itself, which a cut can no longer contradict.
    private var checksTruncation = true
    private var pendingSamples: UnsafePointer<Float>?
    private var pendingFrameCount = 0
    private var framesDelivered = 0
    private var expectedStreamOffset: Int?
    /// The input offset of the MPEG frame decoded last.
    private var frameStartOffset = 0
    private var streamMarks: [StreamMark] = []
    /// A live stream is joined anywhere, and libmpg123 may sync on false headers before it locks on: what it skips
    /// before this output frame (a second after joining or rejoining) is that, told once, not damage.
    private var joinSettlesAtFrame = 0
    private var skippedWhileJoining = 0
    /// Gaps in a live stream taken from the source at the frame decoded last, told as marks when it is delivered.
    private var gapsAtFrame: [Double] = []

    /// Opens a local file at `url` (scanning it when it has no LAME header), with `logger` receiving resync
    /// warnings. See ``init(url:context:)``.
    package convenience init(url: URL, logger: Logger) throws(DecoderError) {
        try self.init(url: url, context: DecoderContext(logger: logger))
    }

    /// Opens `url`: a local file (scanned when it has no LAME header), or a remote one, whose server is asked for it
    /// and whose first frames are awaited as `context` says. Throws a ``DecoderError`` naming the file or URL when it
    /// is missing, unreadable, empty, unreachable, refused by its server, or not MPEG audio. `context`'s logger
    /// receives resync warnings.
    package init(url: URL, context: DecoderContext) throws(DecoderError) {
        self.url = url
        self.logger = context.logger
        let remote: HTTPByteSource?
        if url.isRemoteItem {
            remote = try HTTPByteSource(url: url, context: context)
            source = remote!
        } else {
            try Self.checkReadableFile(url)
            remote = nil
            source = try Self.fileReader(url)
        }

        handle = try Self.openHandle(url, reading: source, remoteHead: remote?.head)
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        mpg123_getformat(handle, &rate, &channels, &encoding)
        format = .stereo(sampleRate: rate)
        let firstFrame = Self.firstFrame(handle)
        let announced = mpg123_length(handle)
        isLive = remote?.head.isLive ?? false
        if let remote, isLive || !Self.lengthIsExact(handle) || announced <= 0 {
            // A live stream, or a remote file without a LAME header: not scanned (that would fetch all of it first).
            // Without a length, it plays until its end or a skip.
            frameCount = !isLive && announced > 0 ? announced : .max
            metadata = Self.readMetadata(handle)
            metadata.stationName = remote.head.stationName
            checksTruncation = false
        } else if Self.lengthIsExact(handle), announced > 0 {
            // A LAME/Xing header gives the exact gapless length: no need to read the whole file before playing.
            frameCount = announced
            metadata = Self.readMetadata(handle)
        } else {
            do throws(DecoderError) {
                (frameCount, metadata) = try Self.scan(url, into: handle)
            } catch {
                mpg123_delete(handle)
                throw error
            }
            checksTruncation = false
        }
        forwardBuffer = remote?.forwardBuffer
        remoteSource = remote
        isSeekable = remote == nil || (!isLive && remote?.head.acceptsRanges == true)
        if isLive { joinSettlesAtFrame = format.sampleRate }
        if let remote {
            Self.noteByteRate(into: remote, firstFrame: firstFrame, frameCount: frameCount, sampleRate: rate)
        }
        let audioBytes = source.length.map { $0 - firstFrame.start }
        estimatedDataRate = Self.dataRate(
            of: firstFrame.info, exactLength: Self.lengthIsExact(handle), audioBytes: isLive ? nil : audioBytes,
            frameCount: frameCount, sampleRate: rate)
    }

    /// The bit rate an MPEG stream carries, in bits a second, as `AVAssetTrack.estimatedDataRate` gives it: the
    /// rate of its frames when its LAME header says they all have one (CBR), the target rate of an average bitrate
    /// (ABR) file, and otherwise (VBR, or no header to say) its audio bytes over its length, when both are known;
    /// for a live stream, its first frame's. Nil when libmpg123 tells none (free format).
    private static func dataRate(
        of info: mpg123_frameinfo2?, exactLength: Bool, audioBytes: Int?, frameCount: Int, sampleRate: Int
    ) -> Int? {
        guard let info else { return nil }
        if info.vbr == Int32(MPG123_ABR.rawValue), info.abr_rate > 0 { return Int(info.abr_rate) * 1000 }
        let announcedConstant = info.vbr == Int32(MPG123_CBR.rawValue) && exactLength
        if !announcedConstant, let audioBytes, audioBytes > 0, frameCount > 0, frameCount != .max, sampleRate > 0 {
            return Int((Double(audioBytes) * 8 * Double(sampleRate) / Double(frameCount)).rounded())
        }
        return info.bitrate > 0 ? Int(info.bitrate) * 1000 : nil
    }

    /// The MPEG frame libmpg123 parsed last, and where it starts in the stream: after opening, the first audio frame,
    /// past the tags and the LAME/Xing frame. Read before a scan, which leaves the stream elsewhere. Nil info and
    /// start 0 when libmpg123 tells none.
    private static func firstFrame(_ handle: OpaquePointer) -> (info: mpg123_frameinfo2?, start: Int) {
        var info = mpg123_frameinfo2()
        let frameEnd = mpg123_tell_stream(handle)
        guard mpg123_info2(handle, &info) == MPG123_OK.rawValue else { return (nil, 0) }
        return (info, frameEnd >= 0 ? max(0, frameEnd - Int(info.framesize) - 4) : 0)
    }

    /// Tells a remote item's forward buffer how many bytes make a second: from the length and duration of a file,
    /// or from the bitrate of a stream's first frame (`firstFrame`, which starts the audio bytes).
    private static func noteByteRate(
        into source: HTTPByteSource, firstFrame: (info: mpg123_frameinfo2?, start: Int), frameCount: Int,
        sampleRate: Int
    ) {
        let audioStart = firstFrame.start
        if let length = source.head.length, frameCount != .max, sampleRate > 0, frameCount > 0 {
            let seconds = Double(frameCount) / Double(sampleRate)
            source.forwardBuffer.setByteRate(Double(length - audioStart) / seconds, audioStart: audioStart)
        } else if let info = firstFrame.info, info.bitrate > 0 {
            source.forwardBuffer.setByteRate(Double(info.bitrate) * 1000 / 8, audioStart: audioStart)
        }
    }

    /// Checks, without decoding or scanning, that `url` is a readable file starting with MPEG audio: what a player
    /// checks before queueing a file. Throws the ``DecoderError`` opening it would throw, naming the file. Reads the
    /// first frames only, so it costs well under a millisecond per file. Any thread.
    package static func check(_ url: URL) throws(DecoderError) {
        guard !url.isRemoteItem else {
            _ = try MPG123Decoder(url: url, context: DecoderContext(logger: Logger(label: "check")))
            return
        }
        try checkReadableFile(url)
        let handle = try openHandle(url, reading: fileReader(url))
        mpg123_close(handle)
        mpg123_delete(handle)
    }

    /// The pictures of the local file at `url`'s ID3v2 tag (APIC frames), in the tag's order; none when it has no
    /// tag. Throws the ``DecoderError`` opening the file would throw, naming it. Reads the tag and the first frame.
    package static func pictures(in url: URL) throws(DecoderError) -> [ItemPicture] {
        try readingID3v2(of: url, keepsPictures: true) { tag in
            guard let pictures = tag.picture else { return [] }
            return (0..<tag.pictures).map { index in
                var picture = pictures[index]
                let bytes = picture.data.map { Array(UnsafeBufferPointer(start: $0, count: picture.size)) } ?? []
                let mimeType = strings(in: &picture.mime_type).first ?? ""
                return ItemPicture(kind: Int(UInt8(bitPattern: picture.type)), mimeType: mimeType, bytes: bytes)
            }
        } ?? []
    }

    /// The user-defined text frames (TXXX) of the local file at `url`'s ID3v2 tag, each its description and its
    /// (first) text, in the tag's order; none when it has no tag. Throws as ``pictures(in:)`` does.
    package static func comments(in url: URL) throws(DecoderError) -> [ItemComment] {
        try readingID3v2(of: url) { tag in
            guard let frames = tag.extra else { return [] }
            return (0..<tag.extras).compactMap { index in
                var frame = frames[index]
                guard let key = strings(in: &frame.description).first, let value = strings(in: &frame.text).first
                else { return nil }
                return ItemComment(key: key, value: value)
            }
        } ?? []
    }

    /// What `read` makes of the local file at `url`'s ID3v2 tag (its pictures kept when `keepsPictures`), the tag
    /// valid for that call only; nil when the file has no tag. Throws the ``DecoderError`` opening the file would
    /// throw, naming it. Reads the tag and the first frame.
    private static func readingID3v2<Value>(
        of url: URL, keepsPictures: Bool = false, _ read: (inout mpg123_id3v2) -> Value
    ) throws(DecoderError) -> Value? {
        try checkReadableFile(url)
        let handle = try openHandle(url, reading: fileReader(url), keepsPictures: keepsPictures)
        defer { mpg123_delete(handle) }
        var v1: UnsafeMutablePointer<mpg123_id3v1>?
        var v2: UnsafeMutablePointer<mpg123_id3v2>?
        guard mpg123_meta_check(handle) & MPG123_ID3 != 0, mpg123_id3(handle, &v1, &v2) == MPG123_OK.rawValue,
            let tag = v2
        else { return nil }
        return read(&tag.pointee)
    }

    /// True when the first frame carried a LAME header: libmpg123 then knows the encoder delay and padding, and
    /// with them the exact gapless length, without reading the rest of the file.
    private static func lengthIsExact(_ handle: OpaquePointer) -> Bool {
        func state(_ key: mpg123_state) -> Int {
            var value = -1
            var unused = 0.0
            guard mpg123_getstate2(handle, Int32(key.rawValue), &value, &unused) == MPG123_OK.rawValue else {
                return -1
            }
            return value
        }
        return state(MPG123_ENC_DELAY) >= 0 && state(MPG123_ENC_PADDING) >= 0
    }

    /// Reads the whole file on a handle of its own for the exact length, the tags and a frame index for seeking.
    /// A separate handle, because a scan ends with a seek back to the start, after which libmpg123's output can
    /// differ from a fresh decode in the last bit (seen with MPEG-2 files); `handle` is never moved before playback,
    /// so it matches `mpg123 -w` exactly.
    private static func scan(_ url: URL, into handle: OpaquePointer) throws(DecoderError) -> (Int, ItemMetadata) {
        let scanner = try openHandle(url, reading: fileReader(url))
        defer { mpg123_delete(scanner) }
        guard mpg123_scan(scanner) == MPG123_OK.rawValue else {
            throw error(.decodingFailed, url: url, handle: scanner, suggestion: "The file may be damaged")
        }
        let frameCount = mpg123_length(scanner)
        guard frameCount > 0 else {
            throw DecoderError(
                .notMPEGAudio, url: url, reason: "not an MP3 file: no MPEG audio frame was found",
                suggestion: "Only MP3 (MPEG audio) files can be played; convert it or remove it from the queue")
        }
        copySeekIndex(from: scanner, to: handle)
        return (frameCount, readMetadata(scanner))
    }

    /// A configured handle reading `url` from `source`, and its first frame parsed. `remoteHead` is what a remote
    /// item's server said of it. Throws ``DecoderError`` naming the file or URL.
    private static func openHandle(
        _ url: URL, reading source: any ByteSource, remoteHead: HTTPBuffer.Head? = nil, keepsPictures: Bool = false
    ) throws(DecoderError) -> OpaquePointer {
        var status: Int32 = 0
        guard let handle = mpg123_new(nil, &status) else {
            throw DecoderError(
                .libraryFailure, url: url, reason: "libmpg123 could not start: \(Self.message(for: status))",
                suggestion: "Check that libmpg123 is installed correctly (apt-get install libmpg123-0)")
        }
        do throws(DecoderError) {
            try configure(handle, url: url, remoteHead: remoteHead, keepsPictures: keepsPictures)
            try open(url, reading: source, on: handle)
            if let length = remoteHead?.length {
                mpg123_set_filesize(handle, length)
            }
            var rate = 0
            var channels: Int32 = 0
            var encoding: Int32 = 0
            guard mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue else {
                if let failure = source.failure { throw failure }
                let detail = String(cString: mpg123_strerror(handle))
                throw DecoderError(
                    .notMPEGAudio, url: url,
                    reason: "not an MP3 file: no MPEG audio frame was found (libmpg123: \(detail))",
                    suggestion: "Only MP3 (MPEG audio) files can be played; convert it or remove it from the queue")
            }
            // A file whose rate changes inside (joined podcasts, recorded streams) keeps the first part's rate:
            // libmpg123 resamples what follows (its NtoM synth), so every part plays at its speed and length.
            // Frames at this rate are decoded as before, bit for bit.
            mpg123_param2(handle, Int32(MPG123_FORCE_RATE.rawValue), rate, 0)
            return handle
        } catch {
            mpg123_delete(handle)
            throw error
        }
    }

    /// A ``BufferedFileReader`` of the file at `url` (a refill per 64 KiB instead of two `read` calls per MP3
    /// frame). Throws ``DecoderError/Code/unreadable`` naming the file.
    private static func fileReader(_ url: URL) throws(DecoderError) -> BufferedFileReader {
        guard let reader = BufferedFileReader(path: url.path) else {
            throw DecoderError(
                .unreadable, url: url, reason: "cannot open it: \(String(cString: strerror(errno)))",
                suggestion: "Check the file's permissions")
        }
        return reader
    }

    /// Opens `url` on `handle`, reading through `source`. libmpg123 owns the source's handle from
    /// `mpg123_open_handle` on: it calls the cleanup callback, which releases it, when the handle is closed
    /// (`mpg123_close`, or `mpg123_delete`, which closes first), also after an open that failed once it was handed
    /// over; a later close passes a null handle, which is ignored.
    private static func open(
        _ url: URL, reading source: any ByteSource, on handle: OpaquePointer
    ) throws(DecoderError) {
        let callbacksSet = mpg123_replace_reader_handle(
            handle,
            { reader, destination, count in
                Unmanaged<ByteSourceHandle>.fromOpaque(reader!).takeUnretainedValue().source
                    .read(into: destination!, count: count)
            },
            { reader, offset, whence in
                Unmanaged<ByteSourceHandle>.fromOpaque(reader!).takeUnretainedValue().source
                    .seek(to: Int(offset), whence: whence)
            },
            { reader in
                if let reader { Unmanaged<ByteSourceHandle>.fromOpaque(reader).release() }
            })
        guard callbacksSet == MPG123_OK.rawValue else {
            throw error(.libraryFailure, url: url, handle: handle, suggestion: "Check that libmpg123 is installed")
        }
        let reader = Unmanaged.passRetained(ByteSourceHandle(source)).toOpaque()
        guard mpg123_open_handle(handle, reader) == MPG123_OK.rawValue else {
            if let failure = source.failure { throw failure }
            throw error(.unreadable, url: url, handle: handle, suggestion: "Check the file's permissions")
        }
    }

    /// Gives the decoding handle the scanner's frame index, so that seeks need not read the file up to the target.
    private static func copySeekIndex(from scanner: OpaquePointer, to handle: OpaquePointer) {
        var offsets: UnsafeMutablePointer<Int>?
        var step = 0
        var fill = 0
        guard mpg123_index(scanner, &offsets, &step, &fill) == MPG123_OK.rawValue, let offsets, fill > 0 else { return }
        mpg123_set_index(handle, offsets, step, fill)
    }

    deinit {
        mpg123_close(handle)
        mpg123_delete(handle)
    }

    /// Decodes whole frames into the front of `destination`; 0 at the end. Throws ``DecoderError/Code/truncated``
    /// once at the end of a file shorter than its header says, and ``DecoderError/Code/decodingFailed`` if
    /// libmpg123 gives up. Blocks on file reads.
    package func decode(into destination: inout MutableSpan<Float>) throws(DecoderError) -> Int {
        let channels = format.channelCount
        let capacity = destination.count / channels
        var written = 0
        while written < capacity {
            if pendingFrameCount == 0 {
                guard try decodeNextFrame() else { break }
                noteMarks(atFrame: framesDelivered + written)
            }
            let count = min(pendingFrameCount, capacity - written)
            if let source = pendingSamples {
                destination.withUnsafeMutableBufferPointer { target in
                    target.baseAddress!.advanced(by: written * channels).update(from: source, count: count * channels)
                }
                pendingSamples = source.advanced(by: count * channels)
            }
            pendingFrameCount -= count
            written += count
        }
        framesDelivered += written
        if written == 0 {
            try reportTruncationOnce()
        }
        if isLive { measureLiveByteRate() }
        return written
    }

    /// A live stream's byte rate, from the bytes read and the audio decoded since the stream was joined, once a
    /// quarter second is decoded: the first frame's header, which the opening used, may be a false sync in the middle
    /// of a frame (a stream is joined anywhere), and then says any bitrate.
    private func measureLiveByteRate() {
        guard let forwardBuffer, framesDelivered >= format.sampleRate / 4, case let read = mpg123_tell_stream(handle),
            read > 0
        else { return }
        forwardBuffer.setByteRate(
            Double(read) * Double(format.sampleRate) / Double(framesDelivered), audioStart: 0)
    }

    /// Sets libmpg123's RVA mode (mix, that is track, or album gain) and has it recompute its output scale, which
    /// applies from the next MPEG frame synthesised. A gain is lowered where the tagged peak would clip.
    package func applyReplayGain(_ gain: AppliedReplayGain) {
        let mode =
            switch gain {
            case .none: MPG123_RVA_OFF
            case .track: MPG123_RVA_MIX
            case .album: MPG123_RVA_ALBUM
            }
        mpg123_param2(handle, Int32(MPG123_RVA.rawValue), Int(mode.rawValue), 0)
        // A change of nothing to the base volume applies the RVA setting anew.
        mpg123_volume_change(handle, 0)
    }

    /// Moves to `frame`: sample-exact, using the scan's frame index, or reading on to it, in a local file and in what
    /// a remote one holds or is about to. Far ahead in a remote file it jumps to where libmpg123 estimates the frame
    /// is from the file's seek table (``jumpsFar(to:)``): the sound heard from there may be a second or two from the
    /// frame asked for (1.4 s, 395 s into a 10-minute file at 32 kbps), which then counts as that frame. Throws for a
    /// frame outside `0...frameCount`.
    package func seek(toFrame frame: Int) throws(DecoderError) {
        guard (0...frameCount).contains(frame) else {
            throw DecoderError(
                .seekOutOfRange, url: url, reason: "frame \(frame) is outside 0...\(frameCount)",
                suggestion: "Seek to a time within the item's duration")
        }
        let jumps = jumpsFar(to: frame)
        if jumps { mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(MPG123_FUZZY.rawValue), 0) }
        let reached = mpg123_seek(handle, frame, SEEK_SET)
        if jumps { mpg123_param2(handle, Int32(MPG123_REMOVE_FLAGS.rawValue), Int(MPG123_FUZZY.rawValue), 0) }
        guard reached >= 0 else {
            if let failure = source.failure { throw failure }
            throw Self.error(.decodingFailed, url: url, handle: handle, suggestion: "The file may be damaged")
        }
        pendingSamples = nil
        pendingFrameCount = 0
        expectedStreamOffset = nil
        framesDelivered = reached
    }

    /// True when `frame` of a remote file lies beyond what its buffer holds or will hold shortly: an exact seek there
    /// would read, and so fetch, every byte up to it (an hour into an episode: all of that hour), where a jump asks
    /// for the bytes from there on (`Range`).
    private func jumpsFar(to frame: Int) -> Bool {
        guard let remoteSource, let length = remoteSource.head.length, frameCount > 0, frameCount != .max else {
            return false
        }
        let estimate = Int(Double(length) * Double(frame) / Double(frameCount))
        let held = remoteSource.heldBytes
        return estimate > held.upperBound + HTTPByteSource.readAheadBytes
    }

    /// Decodes the next MPEG frame into libmpg123's buffer. Returns false at the end of the item.
    private func decodeNextFrame() throws(DecoderError) -> Bool {
        while true {
            var frameNumber = 0
            var audio: UnsafeMutablePointer<UInt8>?
            var byteCount = 0
            let status = mpg123_decode_frame(handle, &frameNumber, &audio, &byteCount)
            switch status {
            case MPG123_OK.rawValue:
                noteResync()
                guard let audio, byteCount > 0 else { continue }
                pendingSamples = UnsafeRawPointer(audio).assumingMemoryBound(to: Float.self)
                pendingFrameCount = byteCount / (MemoryLayout<Float>.size * format.channelCount)
                return true
            case MPG123_NEW_FORMAT.rawValue:
                continue
            case MPG123_DONE.rawValue:
                return false
            default:
                if let failure = source.failure { throw failure }
                throw Self.error(.decodingFailed, url: url, handle: handle, suggestion: "The file may be damaged")
            }
        }
    }

    /// Takes the titles the source received up to the MPEG frame just decoded, whose first output frame is `frame`,
    /// and the gaps taken with it: a mark sent before a frame's first byte applies from that frame on.
    private func noteMarks(atFrame frame: Int) {
        for title in source.takeTitles(through: frameStartOffset) {
            var changed = metadata
            changed.title = title
            streamMarks.append(StreamMark(frame: frame, kind: .metadata(changed)))
        }
        for gap in gapsAtFrame {
            streamMarks.append(StreamMark(frame: frame, kind: .gap(seconds: gap)))
        }
        gapsAtFrame = []
    }

    package func takeStreamMarks() -> [StreamMark] {
        defer { streamMarks = [] }
        return streamMarks
    }

    /// Compares where this frame started with where the previous one ended; a difference is skipped garbage.
    private func noteResync() {
        var info = mpg123_frameinfo2()
        let frameEnd = mpg123_tell_stream(handle)
        guard mpg123_info2(handle, &info) == MPG123_OK.rawValue, frameEnd >= 0 else { return }
        let frameLength = Int(info.framesize) + 4
        let frameStart = frameEnd - frameLength
        frameStartOffset = frameStart
        let gaps = source.takeGaps(through: frameStart)
        if !gaps.isEmpty {
            gapsAtFrame += gaps
            joinSettlesAtFrame = framesDelivered + format.sampleRate
        }
        if let expected = expectedStreamOffset, frameStart > expected {
            let skipped = frameStart - expected
            skippedBytes += skipped
            if framesDelivered < joinSettlesAtFrame {
                skippedWhileJoining += skipped
            } else {
                logger.warning(
                    "skipped damaged data and resynchronised",
                    metadata: ["file": "\(url.itemLocation)", "offset": "\(expected)", "bytes": "\(skipped)"])
            }
        }
        if skippedWhileJoining > 0, framesDelivered >= joinSettlesAtFrame {
            logger.info(
                "joined the live stream mid-frame; skipped bytes until its frames lined up",
                metadata: ["url": "\(url.itemLocation)", "bytes": "\(skippedWhileJoining)"])
            skippedWhileJoining = 0
        }
        expectedStreamOffset = frameEnd
    }

    /// At the end of the item: a file whose header announced more frames than it held was cut short.
    private func reportTruncationOnce() throws(DecoderError) {
        guard checksTruncation else { return }
        checksTruncation = false
        if frameCount - framesDelivered >= max(Int(mpg123_spf(handle)), 1) {
            throw DecoderError(
                .truncated, url: url,
                reason: "the file ends early: its header announces \(frameCount) frames, it holds \(framesDelivered)",
                suggestion: "The file was cut short (an interrupted copy or download); fetch it again")
        }
    }

    /// One `stat` and one `access`: FileManager's attributes would also look up the owner's user and group names
    /// (NSS: four connections to nscd and reads of /etc/passwd and /etc/group) and the extended attributes, on the
    /// decoding thread, before each item's first sound.
    private static func checkReadableFile(_ url: URL) throws(DecoderError) {
        let path = url.path
        var status = stat()
        guard stat(path, &status) == 0 else {
            let error = errno
            throw error == ENOENT || error == ENOTDIR
                ? DecoderError(
                    .fileNotFound, url: url, reason: "no such file",
                    suggestion: "Check the path, or remove the item from the queue")
                : DecoderError(
                    .unreadable, url: url, reason: String(cString: strerror(error)),
                    suggestion: "Check the file's permissions and the folders above it")
        }
        let isDirectory = status.st_mode & S_IFMT == S_IFDIR
        guard !isDirectory, access(path, R_OK) == 0 else {
            throw DecoderError(
                .unreadable, url: url, reason: isDirectory ? "it is a directory" : "permission denied",
                suggestion: isDirectory ? "Queue the MP3 files inside it" : "Check the file's permissions")
        }
        if status.st_size == 0 {
            throw DecoderError(
                .empty, url: url, reason: "the file is empty",
                suggestion: "Replace it with a complete copy, or remove it from the queue")
        }
    }

    /// How many bytes of damage libmpg123 may skip to find the next frame (its default, 1 KiB, gives up on a
    /// few seconds of scratch in a file that plays fine after it).
    package static let resyncLimit = 65_536

    /// Sets gapless stereo Float32 output at every rate. For a remote item (`remoteHead`), libmpg123 does not look
    /// at the end for an ID3v1 tag, which would fetch the end before the start; a remote file of known length stays
    /// seekable (its source fetches ranges); a live stream is read through a small look-ahead buffer. With
    /// `keepsPictures`, the ID3v2 tag's pictures are kept.
    private static func configure(
        _ handle: OpaquePointer, url: URL, remoteHead: HTTPBuffer.Head?, keepsPictures: Bool
    ) throws(DecoderError) {
        var flags = MPG123_GAPLESS.rawValue | MPG123_FORCE_STEREO.rawValue | MPG123_QUIET.rawValue
        if keepsPictures { flags |= MPG123_PICTURE.rawValue }
        if let remoteHead {
            flags |= MPG123_NO_PEEK_END.rawValue
            // A live stream is joined anywhere: without looking ahead to the next header, libmpg123 may take a
            // false one in the middle of a frame for the first (at another sample rate, even).
            flags |= remoteHead.length != nil ? MPG123_FORCE_SEEKABLE.rawValue : MPG123_SEEKBUFFER.rawValue
        }
        var statuses = [
            mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(flags), 0),
            mpg123_param2(handle, Int32(MPG123_REMOVE_FLAGS.rawValue), Int(MPG123_FUZZY.rawValue), 0),
            mpg123_param2(handle, Int32(MPG123_RESYNC_LIMIT.rawValue), resyncLimit, 0),
            mpg123_format_none(handle),
        ]
        var rates: UnsafePointer<Int>?
        var rateCount = 0
        mpg123_rates(&rates, &rateCount)
        for index in 0..<rateCount {
            guard let rate = rates?[index] else { break }
            let stereo = Int32(MPG123_STEREO.rawValue)
            statuses.append(mpg123_format(handle, rate, stereo, Int32(MPG123_ENC_FLOAT_32.rawValue)))
        }
        guard statuses.allSatisfy({ $0 == MPG123_OK.rawValue }) else {
            throw error(
                .libraryFailure, url: url, handle: handle,
                suggestion: "This libmpg123 build lacks float output; install Debian's libmpg123-0")
        }
    }

    private static func readMetadata(_ handle: OpaquePointer) -> ItemMetadata {
        var v1: UnsafeMutablePointer<mpg123_id3v1>?
        var v2: UnsafeMutablePointer<mpg123_id3v2>?
        guard mpg123_meta_check(handle) & MPG123_ID3 != 0, mpg123_id3(handle, &v1, &v2) == MPG123_OK.rawValue else {
            return ItemMetadata()
        }
        let fromV2 = v2.map { readID3v2($0.pointee) } ?? ItemMetadata()
        let fromV1 = v1.map { readID3v1($0.pointee) } ?? ItemMetadata()
        return fromV2.filling(from: fromV1)
    }

    /// Reads the text frames ``ItemMetadata`` names; a frame may hold several NUL-separated values (ID3v2.4), all
    /// UTF-8 by now.
    private static func readID3v2(_ tag: mpg123_id3v2) -> ItemMetadata {
        var metadata = ItemMetadata()
        for index in 0..<tag.texts {
            let field = tag.text[index]
            let id = withUnsafeBytes(of: field.id) { String(decoding: $0, as: UTF8.self) }
            var text = field.text
            let values = strings(in: &text)
            guard !values.isEmpty else { continue }
            let joined = values.joined(separator: " / ")
            switch id {
            case "TIT2": metadata.title = joined
            case "TPE1": metadata.artists = values
            case "TALB": metadata.album = joined
            case "TPE2": metadata.albumArtist = joined
            case "TRCK": metadata.track = joined
            case "TPOS": metadata.disc = joined
            case "TDRC", "TYER": metadata.date = metadata.date ?? joined
            case "TCON": metadata.genre = values.map(ID3Genre.name(of:)).joined(separator: " / ")
            case "TCOM": metadata.composer = joined
            default: break
            }
        }
        return metadata
    }

    private static func readID3v1(_ tag: mpg123_id3v1) -> ItemMetadata {
        func field<T>(_ value: T) -> String? {
            let text = withUnsafeBytes(of: value) { bytes in
                String(bytes: bytes.prefix { $0 != 0 }, encoding: .isoLatin1) ?? ""
            }
            let trimmed = text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()
            return trimmed.isEmpty ? nil : String(trimmed)
        }
        var metadata = ItemMetadata(
            title: field(tag.title), artists: field(tag.artist).map { [$0] } ?? [], album: field(tag.album))
        metadata.date = field(tag.year)
        metadata.genre = ID3Genre.name(number: Int(tag.genre))
        // ID3v1.1 keeps the track number in the comment's last byte, after a NUL.
        let comment = withUnsafeBytes(of: tag.comment) { Array($0) }
        if comment[28] == 0, comment[29] != 0 { metadata.track = "\(comment[29])" }
        return metadata
    }

    private static func strings(in text: inout mpg123_string) -> [String] {
        guard let base = text.p, text.fill > 0 else { return [] }
        let bytes = UnsafeRawBufferPointer(start: base, count: text.fill)
        // libmpg123 converts UTF-16 to UTF-8 but keeps the byte order marks of the second and later values.
        return bytes.split(separator: 0)
            .map { String(decoding: $0, as: UTF8.self).trimmingPrefix("\u{FEFF}") }
            .map(String.init)
            .filter { !$0.isEmpty }
    }

    private static func message(for status: Int32) -> String {
        String(cString: mpg123_plain_strerror(status))
    }

    private static func error(
        _ code: DecoderError.Code, url: URL, handle: OpaquePointer, suggestion: String
    ) -> DecoderError {
        let reason = String(cString: mpg123_strerror(handle))
        return DecoderError(code, url: url, reason: "libmpg123: \(reason)", suggestion: suggestion)
    }
}

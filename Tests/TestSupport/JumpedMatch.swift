/// How a room's recording holds a reference when the stream it was sent may jump: snapserver 0.26 restarts its
/// timeline when it completes a read of its source more than one chunk (20 ms) after that chunk was due, whatever the
/// source had sent ahead (its `AsioStream::do_read` logs "onResync" and starts a new timeline). The rooms then hear
/// the stream go on from another place, as they do where a client resynchronises hard of its own (it plays silence
/// until its next chunk is due). Apart from the jumps, the recording must hold the reference as
/// ``CorrectedMatch`` says: exact but for the client's single-frame corrections. A plain value.
public struct JumpedMatch: Sendable, CustomStringConvertible {
    /// The match over all pieces: heard, inserted and dropped frames added up; lost where the last piece was lost.
    public var match: CorrectedMatch
    /// For each jump, the reference frame it came at, how many reference frames it skipped (negative: heard
    /// again), and how many frames the recording held instead (silence, or sound that is not the reference).
    public var jumps: [(atFrame: Int, skipped: Int, heardInstead: Int)]

    /// The match, then each jump: where it came, what it skipped, and what was heard instead.
    public var description: String {
        "\(match)"
            + jumps.map {
                "; a jump at reference frame \($0.atFrame) skipping \($0.skipped) ("
                    + "\($0.heardInstead) frames heard instead)"
            }.joined()
    }

    /// Frames of the reference accounted for: heard, dropped by a correction, or skipped by a jump.
    public var accountedFrames: Int {
        match.heardFrames + match.droppedFrames + jumps.reduce(0) { $0 + $1.skipped }
    }

    /// Matches `reference` in `recording` (both interleaved stereo) from their first sounding frames, and, where the
    /// match is lost, up to `maximumJumps` times, goes on from where the recording's next sound is found in the
    /// reference within `searchSeconds` either way (at 44.1 kHz).
    public init(recording: [Int16], reference: [Int16], maximumJumps: Int, searchSeconds: Int = 5, probe: Int = 64) {
        self.init(
            continuing: CorrectedMatch(recording: recording, reference: reference, probe: probe), in: recording,
            of: reference, maximumJumps: maximumJumps, searchSeconds: searchSeconds, probe: probe)
    }

    /// Goes on as the initializer above from `first`, a match of all of `reference` already made in `recording` (as
    /// ``CorrectedMatch/locate(_:in:maximumStep:probe:)`` finds one where other sound comes before it).
    public init(
        continuing first: CorrectedMatch, in recording: [Int16], of reference: [Int16], maximumJumps: Int,
        searchSeconds: Int = 5, probe: Int = 64
    ) {
        var piece = first
        var total = piece
        var jumps: [(atFrame: Int, skipped: Int, heardInstead: Int)] = []
        var pieceStart = 0
        while jumps.count < maximumJumps, let lost = piece.lostAtFrame, let heardAt = piece.lostAtRecordingFrame {
            let lostAt = pieceStart + lost
            let search = (lostAt - searchSeconds * 44_100)..<(lostAt + searchSeconds * 44_100)
            let resumed = Self.resumption(in: recording, after: heardAt, of: reference, within: search, probe: probe)
            guard let (recordingFrame, referenceFrame) = resumed else { break }
            jumps.append((lostAt, referenceFrame - lostAt, recordingFrame - heardAt))
            piece = CorrectedMatch(
                recording: recording, reference: Array(reference[(referenceFrame * 2)...]), from: recordingFrame,
                probe: probe)
            pieceStart = referenceFrame
            total.heardFrames += piece.heardFrames
            total.insertedFrames += piece.insertedFrames
            total.droppedFrames += piece.droppedFrames
            total.lostAtFrame = piece.lostAtFrame.map { $0 + referenceFrame }
            total.lostAtRecordingFrame = piece.lostAtRecordingFrame
        }
        match = total
        self.jumps = jumps
    }

    /// The first place at or after recording frame `start` whose next `probe` frames are sounding and found exactly in
    /// `reference` at a frame within `window`: (recording frame, reference frame). Silence and other sound (a jump
    /// may be heard as either) are stepped over, within 5 s of the recording.
    private static func resumption(
        in recording: [Int16], after start: Int, of reference: [Int16], within window: Range<Int>, probe: Int
    ) -> (Int, Int)? {
        let referenceFrames = reference.count / 2
        let low = max(0, window.lowerBound)
        let high = min(referenceFrames - probe, window.upperBound)
        guard low < high else { return nil }
        func key(_ samples: [Int16], _ frame: Int) -> UInt32 {
            UInt32(UInt16(bitPattern: samples[frame * 2])) << 16 | UInt32(UInt16(bitPattern: samples[frame * 2 + 1]))
        }
        var places: [UInt32: [Int]] = [:]
        for frame in low..<high { places[key(reference, frame), default: []].append(frame) }
        let last = min(recording.count / 2 - probe, start + 5 * 44_100)
        guard start <= last else { return nil }
        for recordingFrame in start...last {
            let at = recordingFrame * 2
            guard recording[at] != 0 || recording[at + 1] != 0 else { continue }
            let block = recording[at..<(at + probe * 2)]
            for referenceFrame in places[key(recording, recordingFrame)] ?? [] {
                let from = referenceFrame * 2
                if reference[from..<(from + probe * 2)].elementsEqual(block) {
                    return (recordingFrame, referenceFrame)
                }
            }
        }
        return nil
    }
}

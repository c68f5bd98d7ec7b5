/// How a recording holds a reference when the player that made it inserts or drops a frame now and then to stay in
/// step with a clock (a Snapcast client corrects its offset to the server so), the rest exact. A plain value.
public struct CorrectedMatch: Sendable, CustomStringConvertible {
    /// Frames of the reference found in the recording, in order.
    public var heardFrames = 0
    /// Frames the player inserted.
    public var insertedFrames = 0
    /// Frames of the reference the player dropped.
    public var droppedFrames = 0
    /// The reference frame from which nothing matched any more (a change other than a correction), or nil.
    public var lostAtFrame: Int?
    /// The recording's frame where the match was lost, when ``lostAtFrame`` is set.
    public var lostAtRecordingFrame: Int?

    public var description: String {
        "\(heardFrames) frames heard, \(insertedFrames) inserted, \(droppedFrames) dropped"
            + (lostAtFrame.map { ", no match from reference frame \($0)" } ?? "")
    }

    /// Walks `recording` and `reference` (interleaved stereo) from their first sounding frames. Where they differ,
    /// the walk goes on after skipping up to `maximumStep` frames of either, whichever makes the next `probe` frames
    /// equal: a skip in the recording counts as inserted, one in the reference as dropped.
    public init(recording: [Int16], reference: [Int16], maximumStep: Int = 8, probe: Int = 64) {
        guard let recordingStart = Self.firstSoundingFrame(of: recording),
            let referenceStart = Self.firstSoundingFrame(of: reference), recordingStart >= referenceStart
        else {
            lostAtFrame = 0
            return
        }
        walk(recording, reference, from: recordingStart - referenceStart, maximumStep: maximumStep, probe: probe)
    }

    /// Walks as the initializer above, but with the reference's first frame at the recording's `recordingFrame`.
    public init(recording: [Int16], reference: [Int16], from recordingFrame: Int, maximumStep: Int = 8, probe: Int = 64)
    {
        walk(recording, reference, from: recordingFrame, maximumStep: maximumStep, probe: probe)
    }

    /// Where `reference` starts in `recording` (both interleaved stereo), which may hold other sound before it, and
    /// how the recording holds it from there. A correction may fall in the reference's opening frames, so the first
    /// of its leading `probe`-frame blocks found exactly in the recording anchors the search; of the starts within
    /// `maximumStep` frames per block either side of the one that block implies, the one whose opening matches with
    /// the fewest corrections wins. Nil when none of the first 16 blocks is in the recording.
    public static func locate(
        _ reference: [Int16], in recording: [Int16], maximumStep: Int = 8, probe: Int = 64
    ) -> (frame: Int, match: CorrectedMatch)? {
        let frames = reference.count / 2
        for blockStart in stride(from: 0, to: min(frames - probe + 1, 16 * probe), by: probe) {
            let block = reference[(blockStart * 2)..<((blockStart + probe) * 2)]
            guard let heardAt = firstFrame(of: block, in: recording) else { continue }
            let spread = maximumStep * (blockStart / probe + 1)
            let opening = Array(reference.prefix((blockStart + probe) * 2))
            let candidates = max(0, heardAt - blockStart - spread)...(heardAt - blockStart + spread)
            let scored = candidates.map { candidate in
                let match = CorrectedMatch(
                    recording: recording, reference: opening, from: candidate, maximumStep: maximumStep, probe: probe)
                return (candidate, match.lostAtFrame == nil ? match.insertedFrames + match.droppedFrames : Int.max)
            }
            guard let best = scored.min(by: { $0.1 < $1.1 })?.0 else { continue }
            let match = CorrectedMatch(
                recording: recording, reference: reference, from: best, maximumStep: maximumStep, probe: probe)
            return (best, match)
        }
        return nil
    }

    private static func firstSoundingFrame(of samples: [Int16]) -> Int? {
        stride(from: 0, to: samples.count - 1, by: 2).first { samples[$0] != 0 || samples[$0 + 1] != 0 }.map { $0 / 2 }
    }

    private static func firstFrame(of block: ArraySlice<Int16>, in recording: [Int16]) -> Int? {
        guard let first = block.first, recording.count >= block.count else { return nil }
        return stride(from: 0, through: recording.count - block.count, by: 2).first { start in
            recording[start] == first && recording[start..<(start + block.count)].elementsEqual(block)
        }.map { $0 / 2 }
    }

    private mutating func walk(
        _ recording: [Int16], _ reference: [Int16], from recordingStart: Int, maximumStep: Int, probe: Int
    ) {
        let heard = recording.count / 2
        let expected = reference.count / 2
        guard recordingStart >= 0 else {
            lostAtFrame = 0
            return
        }
        func equal(_ recordingFrame: Int, _ referenceFrame: Int, count: Int) -> Bool {
            guard recordingFrame + count <= heard, referenceFrame + count <= expected else { return false }
            for offset in 0..<count {
                let (r, e) = ((recordingFrame + offset) * 2, (referenceFrame + offset) * 2)
                if recording[r] != reference[e] || recording[r + 1] != reference[e + 1] { return false }
            }
            return true
        }
        var recordingFrame = recordingStart
        var referenceFrame = 0
        while referenceFrame < expected, recordingFrame < heard {
            if equal(recordingFrame, referenceFrame, count: 1) {
                recordingFrame += 1
                referenceFrame += 1
                heardFrames += 1
                continue
            }
            let length = min(probe, expected - referenceFrame)
            func correction() -> Int? {
                for step in 1...maximumStep {
                    if equal(recordingFrame + step, referenceFrame, count: length) { return step }
                    let rest = expected - referenceFrame - step
                    if rest > 0, equal(recordingFrame, referenceFrame + step, count: min(length, rest)) { return -step }
                }
                return nil
            }
            guard let step = correction() else {
                lostAtFrame = referenceFrame
                lostAtRecordingFrame = recordingFrame
                return
            }
            if step > 0 {
                insertedFrames += step
                recordingFrame += step
            } else {
                droppedFrames -= step
                referenceFrame -= step
            }
        }
        if referenceFrame < expected {
            lostAtFrame = referenceFrame
            lostAtRecordingFrame = recordingFrame
        }
    }
}

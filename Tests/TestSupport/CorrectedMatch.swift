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

    public var description: String {
        "\(heardFrames) frames heard, \(insertedFrames) inserted, \(droppedFrames) dropped"
            + (lostAtFrame.map { ", no match from reference frame \($0)" } ?? "")
    }

    /// Walks `recording` and `reference` (interleaved stereo) from their first sounding frames. Where they differ,
    /// the walk goes on after skipping up to `maximumStep` frames of either, whichever makes the next `probe` frames
    /// equal: a skip in the recording counts as inserted, one in the reference as dropped.
    public init(recording: [Int16], reference: [Int16], maximumStep: Int = 8, probe: Int = 64) {
        let heard = recording.count / 2
        let expected = reference.count / 2
        func sounding(_ samples: [Int16]) -> Int? {
            stride(from: 0, to: samples.count - 1, by: 2).first { samples[$0] != 0 || samples[$0 + 1] != 0 }.map {
                $0 / 2
            }
        }
        guard let recordingStart = sounding(recording), let referenceStart = sounding(reference),
            recordingStart >= referenceStart
        else {
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
        var recordingFrame = recordingStart - referenceStart
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
        if referenceFrame < expected { lostAtFrame = referenceFrame }
    }
}

/// Describes how two sample arrays differ in a line a person can read, or returns nil when they are equal.
/// (`#expect(a == b)` on arrays of a million samples prints both arrays.)
public func sampleDifference<T: Equatable>(_ actual: [T], _ expected: [T]) -> String? {
    guard actual != expected else { return nil }
    let common = min(actual.count, expected.count)
    let first = (0..<common).first { actual[$0] != expected[$0] }
    var text = "\(actual.count) samples, expected \(expected.count)"
    if let first {
        let mismatches = (0..<common).count { actual[$0] != expected[$0] }
        text += "; \(mismatches) differ, first at \(first) (frame \(first / 2)): \(actual[first]) vs \(expected[first])"
    }
    return text
}

/// Finds `reference` (interleaved stereo) in a monitor recording, starting at the recording's first sound, and
/// describes any difference: a changed sample, a gap, or sound after the end. Nil when the recording holds the
/// reference exactly, surrounded only by silence.
public func recordingDifference(_ recording: [Int16], reference: [Int16]) -> String? {
    guard let firstSound = recording.firstIndex(where: { $0 != 0 }),
        let referenceSound = reference.firstIndex(where: { $0 != 0 })
    else { return "the recording is silent" }
    let start = (firstSound / 2 - referenceSound / 2) * 2
    guard start >= 0, start + reference.count <= recording.count else {
        return "the recording (\(recording.count / 2) frames) is too short for the reference from frame \(start / 2)"
    }
    if let difference = sampleDifference(Array(recording[start..<start + reference.count]), reference) {
        return "from frame \(start / 2) of the recording: \(difference)"
    }
    if let late = recording[(start + reference.count)...].firstIndex(where: { $0 != 0 }) {
        return "sound after the end, at recording frame \(late / 2)"
    }
    return nil
}

/// The frames of `samples` that are not digital silence, for comparisons that must ignore pauses.
public func soundingFrames<Sample: Numeric>(_ samples: [Sample]) -> [Sample] {
    stride(from: 0, to: samples.count - 1, by: 2).filter { samples[$0] != 0 || samples[$0 + 1] != 0 }
        .flatMap { [samples[$0], samples[$0 + 1]] }
}

/// The sounding frames of interleaved stereo `samples` before and after their longest run of silence inside (a
/// pause).
public func splitAtLongestSilence(_ samples: [Int16]) -> (before: [Int16], after: [Int16]) {
    let silence = longestInnerSilence(samples)
    guard silence.frames > 0 else { return (soundingFrames(samples), []) }
    let end = (silence.start + silence.frames) * 2
    return (soundingFrames(Array(samples[..<(silence.start * 2)])), soundingFrames(Array(samples[end...])))
}

/// The longest run of silent frames (both channels 0) between the first and the last sounding frame of interleaved
/// stereo `samples`: a pause, or a gap at a join.
public func longestSilence(inside samples: [Int16]) -> Int {
    longestInnerSilence(samples).frames
}

/// Where the longest run of silent frames between sounding ones starts, and how long it is, in frames.
private func longestInnerSilence(_ samples: [Int16]) -> (start: Int, frames: Int) {
    var longest = (start: 0, frames: 0)
    var run = 0
    var sounded = false
    for frame in 0..<(samples.count / 2) {
        if samples[frame * 2] == 0, samples[frame * 2 + 1] == 0 {
            run += 1
            continue
        }
        if sounded, run > longest.frames { longest = (frame - run, run) }
        sounded = true
        run = 0
    }
    return longest
}

/// How many frames are missing from `actual` (interleaved stereo) against `expected`: 0 when it is a prefix of it,
/// `n` when it is, once one run of `n` frames (`n` at most `maximumDroppedFrames`) is taken out of `expected`, and nil
/// otherwise. A monitor recording of a PipeWire graph that dropped a quantum reads so.
public func droppedFrames(_ actual: [Int16], in expected: [Int16], maximumDroppedFrames: Int) -> Int? {
    let common = min(actual.count, expected.count)
    guard let first = (0..<common).first(where: { actual[$0] != expected[$0] }) else {
        return actual.count <= expected.count ? 0 : nil
    }
    let firstFrame = first / 2
    for dropped in stride(from: 1, through: maximumDroppedFrames, by: 1) {
        let shift = (firstFrame + dropped) * 2
        guard shift + (actual.count - firstFrame * 2) <= expected.count else { break }
        if actual[(firstFrame * 2)...].elementsEqual(expected[shift..<(shift + actual.count - firstFrame * 2)]) {
            return dropped
        }
    }
    return nil
}

/// What a comparison of a recording with its reference forgives: up to `count` runs of at most `frames` frames each,
/// missing from the recording, or silence in the recording where as many frames of the reference went by or fewer
/// (silent in its place, silence inserted, or between), or more (quanta lost beside one played as silence), none of
/// the runs longer than `frames`. A plain value, for any thread.
public struct GlitchAllowance: Sendable {
    /// The longest run forgiven, in frames.
    public var frames: Int
    /// How many runs are forgiven.
    public var count: Int

    /// Forgives `count` runs of at most `frames` frames.
    public init(frames: Int, count: Int = 1) {
        self.frames = frames
        self.count = count
    }

    /// Frames of the reference where one item meets the next: a glitch that touches one is never forgiven.
    public var joins: [Int] = []

    /// Forgives nothing: the recording must be exact.
    public static let none = GlitchAllowance(frames: 0, count: 0)

    /// The same allowance, except at `joins` (frames of the reference): a server's lost quantum lands anywhere, but a
    /// gap the player leaves between two items lands at their join, so a glitch that reaches a join's frame counts
    /// as a difference. A lost quantum of 512 frames lands on one of two joins in a 4.5 s recording about once in
    /// 190 losses, and losses are rare themselves.
    public func exceptAt(joins: [Int]) -> GlitchAllowance {
        var allowance = self
        allowance.joins = joins
        return allowance
    }

    /// The first of ``joins`` that the glitch over the reference's frames `start...end` touches, which makes it
    /// unforgivable; nil when it touches none.
    func join(touchedFrom start: Int, through end: Int) -> Int? {
        joins.first { (start...end).contains($0) }
    }
}

/// The frames at which each of `parts` (interleaved stereo, played back to back) after the first begins.
public func joinFrames(of parts: [[Int16]]) -> [Int] {
    var joins: [Int] = []
    var frame = 0
    for part in parts.dropLast() {
        frame += part.count / 2
        joins.append(frame)
    }
    return joins
}

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

/// Where `actual` (interleaved stereo) parts from `expected`, both from the same first frame, and where it joins it
/// again, up to `limit` times, in a line a person can read: each glitch as the silence the recording holds there and
/// how many frames of `expected` it skips (negative: repeats) before the two agree for 128 frames; nil when one is a
/// prefix of the other. For a failure message, where what kind of glitch it was is what the next reader needs.
public func glitchDescription(_ actual: [Int16], in expected: [Int16], limit: Int = 12) -> String? {
    let probe = 128 * 2
    var (actualAt, expectedAt) = (0, 0)
    var glitches: [String] = []
    while glitches.count < limit {
        let length = min(actual.count - actualAt, expected.count - expectedAt)
        guard let offset = (0..<max(0, length)).first(where: { actual[actualAt + $0] != expected[expectedAt + $0] })
        else { break }
        let (partedInActual, partedInExpected) = (actualAt + offset / 2 * 2, expectedAt + offset / 2 * 2)
        var resumed = partedInActual
        while resumed + 1 < actual.count, actual[resumed] == 0, actual[resumed + 1] == 0 { resumed += 2 }
        let silence = (resumed - partedInActual) / 2
        let block = actual[resumed..<min(resumed + probe, actual.count)]
        let found = stride(from: 0, through: expected.count - probe, by: 2).first {
            block.count == probe && expected[$0] == block.first && expected[$0..<($0 + probe)].elementsEqual(block)
        }
        guard let found else {
            glitches.append(
                "parts at frame \(partedInActual / 2) (\(silence) frames of silence), and never agrees again")
            break
        }
        glitches.append(
            "parts at frame \(partedInActual / 2) (\(silence) frames of silence), agrees again "
                + "\((found - partedInExpected) / 2) frames of the reference on")
        (actualAt, expectedAt) = (resumed, found)
    }
    return glitches.isEmpty ? nil : glitches.joined(separator: "; ")
}

/// Finds `reference` (interleaved stereo) in a monitor recording, starting at the recording's first sound, and
/// describes any difference: a changed sample, a gap, or sound after the end. Nil when the recording holds the
/// reference exactly, surrounded only by silence. A recording it refuses is kept (``KeptRecordings``).
///
/// What `allowance` forgives may be missing from the recording, silent in its place, silence inserted into it, or
/// silence longer or shorter than the frames it took the place of, the rest still exact: what a monitor of
/// PipeWire's graph records when the graph loses quanta, or plays one late
/// (``PulseServer/Kind/droppedQuanta(during:)``). One glitch more, a longer one, or any other change still differs.
public func recordingDifference(
    _ recording: [Int16], reference: [Int16], allowing allowance: GlitchAllowance = .none
) -> String? {
    guard let firstSound = recording.firstIndex(where: { $0 != 0 }),
        let referenceSound = reference.firstIndex(where: { $0 != 0 })
    else { return "the recording is silent" }
    let start = (firstSound / 2 - referenceSound / 2) * 2
    guard start >= 0 else {
        return "the recording's sound starts \(-start / 2) frames before the reference's could"
    }
    let heard = Array(recording[start...])
    let walk = channelGlitchFrames(heard, in: reference, allowing: allowance)
    guard case .forgiven(let missing) = walk, heard.count >= reference.count - missing * 2 else {
        let span = Array(heard.prefix(reference.count))
        let glitches = glitchDescription(heard, in: reference).map { " (\($0))" } ?? ""
        let refusal = if case .refused(let reason) = walk { "; refused: \(reason)" } else { "" }
        return "from frame \(start / 2) of the recording: \(sampleDifference(span, reference) ?? "a second glitch")"
            + glitches + refusal + KeptRecordings.keep(recording, reference: reference)
    }
    let end = start + reference.count - missing * 2
    if let late = recording[end...].firstIndex(where: { $0 != 0 }) {
        let kept = KeptRecordings.keep(recording, reference: reference)
        return "sound after the end, at recording frame \(late / 2)\(kept)"
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

/// The lengths, in frames, of the runs of at least `frames` silent frames between the first and the last sounding
/// frame of interleaved stereo `samples`, in order: pauses, gaps at joins, or a restart's wait.
public func silences(inside samples: [Int16], atLeast frames: Int) -> [Int] {
    innerSilences(samples).filter { $0.frames >= frames }.map(\.frames)
}

/// Where the longest run of silent frames between sounding ones starts, and how long it is, in frames.
private func longestInnerSilence(_ samples: [Int16]) -> (start: Int, frames: Int) {
    innerSilences(samples).max { $0.frames < $1.frames } ?? (0, 0)
}

/// Every run of silent frames between sounding ones: where it starts and how long it is, in frames.
private func innerSilences(_ samples: [Int16]) -> [(start: Int, frames: Int)] {
    var runs: [(start: Int, frames: Int)] = []
    var run = 0
    var sounded = false
    for frame in 0..<(samples.count / 2) {
        if samples[frame * 2] == 0, samples[frame * 2 + 1] == 0 {
            run += 1
            continue
        }
        if sounded, run > 0 { runs.append((frame - run, run)) }
        sounded = true
        run = 0
    }
    return runs
}

/// How many frames are missing from `actual` (interleaved stereo) against `expected`: 0 when it is a prefix of it,
/// `n` when it is once runs of `n` frames in all, as many and as long as `allowance` forgives, are taken out of
/// `expected`, and nil otherwise. A monitor recording of a PipeWire graph that dropped a quantum reads so. (A run
/// recorded as silence in place is forgiven too, and counts 0; silence inserted counts its frames negative.)
public func droppedFrames(_ actual: [Int16], in expected: [Int16], allowing allowance: GlitchAllowance) -> Int? {
    guard case .forgiven(let missing) = droppedFramesWalk(actual, in: expected, allowing: allowance) else { return nil }
    return missing
}

/// How `actual` differs from `expected`, as ``glitchDescription(_:in:limit:)`` shows it, and when
/// ``droppedFrames(_:in:allowing:)`` returns nil, which glitch `allowance` did not forgive and why (where it is, and
/// how near a forgivable one came), in a line a person can read, and where the two were kept (``KeptRecordings``).
/// For a failure message, from any thread.
public func glitchReport(_ actual: [Int16], in expected: [Int16], allowing allowance: GlitchAllowance) -> String {
    let glitches = glitchDescription(actual, in: expected) ?? "no glitch"
    guard case .refused(let reason) = droppedFramesWalk(actual, in: expected, allowing: allowance) else {
        return glitches
    }
    return "\(glitches); refused: \(reason)" + KeptRecordings.keep(actual, reference: expected)
}

private func droppedFramesWalk(
    _ actual: [Int16], in expected: [Int16], allowing allowance: GlitchAllowance
) -> GlitchWalk {
    let walk = channelGlitchFrames(actual, in: expected, allowing: allowance)
    guard case .forgiven(let missing) = walk, actual.count > expected.count - missing * 2 else { return walk }
    return .refused(
        "the recording goes on \((actual.count - expected.count) / 2 + missing) frames past the reference's end, "
            + "\(missing) frames missing")
}

/// How a walk over a recording ended: with the frames missing once every glitch was forgiven, or with the reason one
/// was not.
private enum GlitchWalk {
    case forgiven(missing: Int)
    case refused(String)
}

/// ``glitchFrames(_:in:allowing:)`` over both channels together, and where that refuses and `allowance` forgives
/// anything, over each channel on its own: forgiven when each channel is, with as many frames missing. A stalled
/// PipeWire graph has been recorded playing one channel a quantum late beside the other on time (under
/// ThreadSanitizer, its process frozen for 20-80 ms at a time: after 512 frames of silence, the left channel went on
/// where the silence began and the right 512 frames later, until the left lost a quantum), which no player's
/// interleaved stream can cause.
private func channelGlitchFrames(
    _ actual: [Int16], in expected: [Int16], allowing allowance: GlitchAllowance
) -> GlitchWalk {
    let together = glitchFrames(actual, in: expected, allowing: allowance)
    guard case .refused(let reason) = together, allowance.count > 0 else { return together }
    /// Channel `index` of interleaved stereo `samples`, as stereo with that channel in both.
    func channel(_ index: Int, of samples: [Int16]) -> [Int16] {
        stride(from: index, to: samples.count, by: 2).flatMap { [samples[$0], samples[$0]] }
    }
    let walks = (0..<2).map {
        glitchFrames(channel($0, of: actual), in: channel($0, of: expected), allowing: allowance)
    }
    if case .forgiven(let left) = walks[0], case .forgiven(let right) = walks[1], left == right {
        return .forgiven(missing: left)
    }
    let apart = zip(["left", "right"], walks).map { name, walk in
        switch walk {
        case .forgiven(let missing): "\(name) alone forgiven, \(missing) frames missing"
        case .refused(let reason): "\(name) alone: \(reason)"
        }
    }
    return .refused("\(reason); \(apart.joined(separator: "; "))")
}

/// Compares `actual` with `expected` (interleaved stereo, both from the same first frame) where they overlap, and
/// forgives the glitches `allowance` allows: each a run of `expected` missing from `actual`, or a run of silence in
/// `actual` where as many frames of `expected` went by, fewer or more (in its place, inserted, between, or beside
/// quanta lost). Gives the frames missing (0 when equal or silenced in place; silence beyond what it replaced counts
/// negative), or why they differ otherwise. Whether either goes on past the other is for the caller to judge.
///
/// A glitch is placed at the first difference, as the shortest run after which the two agree again: to their end
/// for the last glitch allowed, and for ``resyncFrames`` (or to their end) for an earlier one.
private func glitchFrames(
    _ actual: [Int16], in expected: [Int16], allowing allowance: GlitchAllowance
) -> GlitchWalk {
    let (maximumFrames, maximumGlitches) = (allowance.frames, allowance.count)
    /// Where `actual` from `actualFrom` and `expected` from `expectedFrom` first differ (samples from there), or nil
    /// when they agree wherever both go on.
    func firstDifference(actualFrom: Int, expectedFrom: Int) -> Int? {
        let length = min(actual.count - actualFrom, expected.count - expectedFrom)
        guard length > 0 else { return nil }
        return (0..<length).first { actual[actualFrom + $0] != expected[expectedFrom + $0] }
    }
    var (actualAt, expectedAt, missing, glitch) = (0, 0, 0, 0)
    while true {
        guard let difference = firstDifference(actualFrom: actualAt, expectedFrom: expectedAt) else {
            return .forgiven(missing: missing)
        }
        let glitchInActual = actualAt + difference / 2 * 2
        let glitchInExpected = expectedAt + difference / 2 * 2
        let place = "at frame \(glitchInActual / 2) of the recording, \(glitchInExpected / 2) of the reference"
        guard glitch < maximumGlitches else {
            return .refused("glitch \(glitch + 1) \(place) is one more than the \(maximumGlitches) allowed")
        }
        let agreesAgainFor = glitch == maximumGlitches - 1 ? Int.max : resyncFrames * 2
        var nearest = (frames: 0, agreeing: 0)
        func agrees(actualFrom: Int, expectedFrom: Int, frames: Int) -> Bool {
            let agreeing = firstDifference(actualFrom: actualFrom, expectedFrom: expectedFrom) ?? .max
            if agreeing > nearest.agreeing * 2 { nearest = (frames, agreeing / 2) }
            return agreeing >= agreesAgainFor
        }
        var placed = false
        for frames in stride(from: 1, through: maximumFrames, by: 1) {
            let glitchEnd = glitchInExpected + frames * 2
            guard glitchEnd <= expected.count else { break }
            let silencedEnd = glitchInActual + frames * 2
            let silencedInPlace = actual[glitchInActual..<min(silencedEnd, actual.count)].allSatisfy { $0 == 0 }
            // `frames` of silence where the reference went on by `skipped` frames: in its place when they are as many,
            // inserted when none was skipped, a lost quantum's silence that lasted longer when fewer, and quanta lost
            // beside one played as silence when more (tried only where the silence ends, and after the others).
            func agreesAfterSilence(skipping skipped: Int) -> Bool {
                agrees(actualFrom: silencedEnd, expectedFrom: glitchInExpected + skipped * 2, frames: frames)
            }
            func skippedBeyondSilence() -> Int? {
                let silenceEnds = silencedEnd + 1 < actual.count && actual[silencedEnd..<(silencedEnd + 2)] != [0, 0]
                let mostSkipped = silenceEnds ? min(maximumFrames, (expected.count - glitchInExpected) / 2) : frames
                return stride(from: frames + 1, through: mostSkipped, by: 1).first(where: agreesAfterSilence)
            }
            if silencedInPlace, silencedEnd <= actual.count,
                let skipped = (0...frames).reversed().first(where: agreesAfterSilence) ?? skippedBeyondSilence()
            {
                (actualAt, expectedAt, placed) = (silencedEnd, glitchInExpected + skipped * 2, true)
                missing += skipped - frames
                break
            }
            if agrees(actualFrom: glitchInActual, expectedFrom: glitchEnd, frames: frames) {
                (actualAt, expectedAt, placed) = (glitchInActual, glitchEnd, true)
                missing += frames
                break
            }
        }
        guard placed else {
            let needed = agreesAgainFor == .max ? "to the end" : "for \(resyncFrames) frames"
            let near =
                nearest.agreeing == 0
                ? "none came near" : "nearest: \(nearest.frames) frames, then \(nearest.agreeing) agreeing"
            return .refused(
                "glitch \(glitch + 1) \(place): no run of up to \(maximumFrames) frames after which the two agree "
                    + "again \(needed) (\(near))")
        }
        if let join = allowance.join(touchedFrom: glitchInExpected / 2, through: expectedAt / 2) {
            return .refused("glitch \(glitch + 1) \(place) reaches the join at frame \(join) of the reference")
        }
        glitch += 1
    }
}

/// How long two recordings must agree after a glitch that is not the last one allowed for it to count as placed: 6 ms
/// of decoded sound, which does not match itself bit-exact at another offset, and shorter than the 512 frames
/// PipeWire's graph has been recorded playing between two quanta it lost (silences at frames 181,446 and 182,470).
private let resyncFrames = 256

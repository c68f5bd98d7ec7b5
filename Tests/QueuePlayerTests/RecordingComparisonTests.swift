import Foundation
import TestSupport
import TestTiers
import Testing

@Suite(
    "Recording comparison: exact, but for lost or late quanta where the server is allowed them", .tier(.deterministic))
struct RecordingComparisonTests {
    /// 4,000 frames of interleaved stereo, no sample 0, each frame distinct.
    private let reference: [Int16] = (0..<8_000).map { Int16(1 + $0 % 30_000) }
    /// Silence around a recording, as the monitor records before and after the stream.
    private let lead = [Int16](repeating: 0, count: 600)

    /// One run of up to 512 frames forgiven, and two.
    private let upToOneQuantum = GlitchAllowance(frames: 512)
    private let upToTwoQuanta = GlitchAllowance(frames: 512, count: 2)

    private func recording(_ heard: [Int16]) -> [Int16] { lead + heard + lead }

    private func silencing(frames: Range<Int>, of samples: [Int16]) -> [Int16] {
        var silenced = samples
        silenced.replaceSubrange(
            (frames.lowerBound * 2)..<(frames.upperBound * 2), with: repeatElement(0, count: frames.count * 2))
        return silenced
    }

    private func removing(frames: Range<Int>, of samples: [Int16]) -> [Int16] {
        var removed = samples
        removed.removeSubrange((frames.lowerBound * 2)..<(frames.upperBound * 2))
        return removed
    }

    @Test("an exact recording matches with or without an allowance; a changed sample or a late sound never does")
    func exact() {
        #expect(recordingDifference(recording(reference), reference: reference) == nil)
        #expect(recordingDifference(recording(reference), reference: reference, allowing: upToOneQuantum) == nil)
        var changed = reference
        changed[3_001] += 1
        #expect(recordingDifference(recording(changed), reference: reference, allowing: upToOneQuantum) != nil)
        let late = recording(reference) + [0, 0, 7, 7]
        #expect(recordingDifference(late, reference: reference, allowing: upToOneQuantum) != nil)
    }

    @Test("one quantum left out, or recorded as silence in place, is forgiven only within the allowance")
    func oneQuantum() {
        let droppedOne = recording(removing(frames: 1_024..<1_280, of: reference))
        let silencedOne = recording(silencing(frames: 1_024..<1_280, of: reference))
        #expect(recordingDifference(droppedOne, reference: reference) != nil)
        #expect(recordingDifference(silencedOne, reference: reference) != nil)
        #expect(recordingDifference(droppedOne, reference: reference, allowing: GlitchAllowance(frames: 256)) == nil)
        #expect(recordingDifference(silencedOne, reference: reference, allowing: GlitchAllowance(frames: 256)) == nil)
        #expect(recordingDifference(droppedOne, reference: reference, allowing: GlitchAllowance(frames: 255)) != nil)
        #expect(recordingDifference(silencedOne, reference: reference, allowing: GlitchAllowance(frames: 255)) != nil)
    }

    @Test("a glitch at a join of two items is never forgiven, though the same glitch elsewhere is")
    func glitchAtAJoin() {
        let joins = joinFrames(of: [Array(reference[..<4_000]), Array(reference[4_000...])])
        #expect(joins == [2_000])
        let allowance = upToOneQuantum.exceptAt(joins: joins)
        let gapAtJoin = inserting(silenceFrames: 100, at: 2_000, into: reference)
        let lostBeforeJoin = removing(frames: 1_900..<2_000, of: reference)
        let lostElsewhere = removing(frames: 1_024..<1_280, of: reference)
        #expect(recordingDifference(recording(gapAtJoin), reference: reference, allowing: upToOneQuantum) == nil)
        #expect(recordingDifference(recording(gapAtJoin), reference: reference, allowing: allowance) != nil)
        #expect(recordingDifference(recording(lostBeforeJoin), reference: reference, allowing: allowance) != nil)
        #expect(recordingDifference(recording(lostElsewhere), reference: reference, allowing: allowance) == nil)
    }

    private func inserting(silenceFrames: Int, at frame: Int, into samples: [Int16]) -> [Int16] {
        var inserted = samples
        inserted.insert(contentsOf: repeatElement(0, count: silenceFrames * 2), at: frame * 2)
        return inserted
    }

    @Test("silence inserted (a quantum played late) is forgiven only within the allowance, and moves the end with it")
    func insertedSilence() {
        let lateOne = inserting(silenceFrames: 256, at: 1_024, into: reference)
        #expect(recordingDifference(recording(lateOne), reference: reference) != nil)
        let oneQuantum = GlitchAllowance(frames: 256)
        let lessThanOne = GlitchAllowance(frames: 255)
        #expect(recordingDifference(recording(lateOne), reference: reference, allowing: oneQuantum) == nil)
        #expect(recordingDifference(recording(lateOne), reference: reference, allowing: lessThanOne) != nil)
        #expect(droppedFrames(lateOne, in: reference, allowing: upToOneQuantum) == -256)
        let lateAndDropped = removing(frames: 3_000..<3_100, of: lateOne)
        #expect(
            recordingDifference(recording(lateAndDropped), reference: reference, allowing: upToTwoQuanta) == nil)
        #expect(
            recordingDifference(recording(lateAndDropped), reference: reference, allowing: upToOneQuantum) != nil)
        let soundAfterTheEnd = recording(lateOne) + [0, 0, 7, 7]
        #expect(recordingDifference(soundAfterTheEnd, reference: reference, allowing: upToOneQuantum) != nil)
    }

    /// What PipeWire's graph was recorded doing (scripts/bench_glitches.py): a quantum of the stream lost, and a longer
    /// silence in its place.
    @Test("a quantum lost with longer silence in its place is forgiven within the allowance, counting the extra")
    func lostWithLongerSilence() {
        let lost = removing(frames: 1_024..<1_280, of: reference)
        let heard = inserting(silenceFrames: 512, at: 1_024, into: lost)
        #expect(recordingDifference(recording(heard), reference: reference) != nil)
        #expect(recordingDifference(recording(heard), reference: reference, allowing: upToOneQuantum) == nil)
        #expect(droppedFrames(heard, in: reference, allowing: upToOneQuantum) == -256)
        let lessThanTheSilence = GlitchAllowance(frames: 511)
        #expect(recordingDifference(recording(heard), reference: reference, allowing: lessThanTheSilence) != nil)
    }

    @Test("quanta lost beside one played as silence are forgiven as one glitch, if no longer than the allowance")
    func lostWithShorterSilence() {
        // Under ThreadSanitizer and stalls: 512 frames of silence where 1,024 of the reference went by.
        let heard = inserting(silenceFrames: 512, at: 1_024, into: removing(frames: 1_024..<2_048, of: reference))
        let twoQuantaLong = GlitchAllowance(frames: 1_024)
        #expect(recordingDifference(recording(heard), reference: reference, allowing: twoQuantaLong) == nil)
        #expect(droppedFrames(heard, in: reference, allowing: twoQuantaLong) == 512)
        #expect(recordingDifference(recording(heard), reference: reference, allowing: upToTwoQuanta) != nil)
        #expect(droppedFrames(heard, in: reference, allowing: GlitchAllowance(frames: 1_023)) == nil)
    }

    @Test("a channel played a quantum late beside the other on time is forgiven channel by channel, if it catches up")
    func channelsApart() {
        func channel(_ index: Int, frames: Range<Int>) -> [Int16] {
            frames.map { reference[$0 * 2 + index] }
        }
        let silence = [Int16](repeating: 0, count: 512)
        // After 512 frames of silence, the left channel goes on where the silence began, the right where it ended,
        // until the left loses a quantum: what a stalled PipeWire graph was recorded doing.
        let left =
            channel(0, frames: 0..<1_024) + silence + channel(0, frames: 1_024..<1_536)
            + channel(0, frames: 2_048..<4_000)
        let right = channel(1, frames: 0..<1_024) + silence + channel(1, frames: 1_536..<4_000)
        let heard = zip(left, right).flatMap { [$0, $1] }
        #expect(recordingDifference(recording(heard), reference: reference, allowing: upToTwoQuanta) == nil)
        #expect(droppedFrames(heard, in: reference, allowing: upToTwoQuanta) == 0)
        #expect(recordingDifference(recording(heard), reference: reference, allowing: upToOneQuantum) != nil)
        #expect(recordingDifference(recording(heard), reference: reference) != nil)
        // A channel that stays behind is no glitch of the graph's.
        let behind = channel(0, frames: 0..<1_024) + silence + channel(0, frames: 1_024..<3_488)
        let apart = zip(behind, right).flatMap { [$0, $1] }
        #expect(
            glitchReport(apart, in: reference, allowing: upToTwoQuanta).contains(
                "left alone forgiven, -512 frames missing; right alone forgiven, 0 frames missing"))
    }

    @Test("a second lost quantum, or a quantum lost and another sample changed, is never forgiven")
    func secondGlitch() {
        let twoSilenced = silencing(frames: 2_048..<2_304, of: silencing(frames: 512..<768, of: reference))
        #expect(recordingDifference(recording(twoSilenced), reference: reference, allowing: upToOneQuantum) != nil)
        let silencedAndDropped = removing(frames: 2_048..<2_304, of: silencing(frames: 512..<768, of: reference))
        #expect(
            recordingDifference(recording(silencedAndDropped), reference: reference, allowing: upToOneQuantum) != nil)
        var droppedAndChanged = removing(frames: 512..<768, of: reference)
        droppedAndChanged[5_000] += 1
        #expect(
            recordingDifference(recording(droppedAndChanged), reference: reference, allowing: upToOneQuantum) != nil)
    }

    @Test("with two glitches allowed, two lost or silenced quanta are forgiven, and a third or a changed sample is not")
    func twoGlitches() {
        let silencedAndDropped = removing(frames: 2_700..<2_956, of: silencing(frames: 300..<556, of: reference))
        #expect(
            recordingDifference(recording(silencedAndDropped), reference: reference, allowing: upToTwoQuanta)
                == nil)
        #expect(
            recordingDifference(recording(silencedAndDropped), reference: reference, allowing: upToOneQuantum) != nil)
        let twoDropped = removing(frames: 2_600..<2_728, of: removing(frames: 300..<556, of: reference))
        #expect(droppedFrames(twoDropped, in: reference, allowing: upToTwoQuanta) == 384)
        let threeDropped = removing(frames: 3_400..<3_500, of: twoDropped)
        #expect(droppedFrames(threeDropped, in: reference, allowing: upToTwoQuanta) == nil)
        var droppedTwiceAndChanged = twoDropped
        droppedTwiceAndChanged[7_000] += 1
        #expect(
            droppedFrames(droppedTwiceAndChanged, in: reference, allowing: upToTwoQuanta) == nil)
    }

    /// PipeWire's graph was recorded losing two quanta of 512 frames with only one played between them.
    @Test("two quanta lost 512 frames apart are forgiven as two glitches, and not as one")
    func twoQuantaCloseTogether() {
        let twoLost = silencing(frames: 1_536..<2_048, of: silencing(frames: 512..<1_024, of: reference))
        #expect(recordingDifference(recording(twoLost), reference: reference, allowing: upToTwoQuanta) == nil)
        #expect(recordingDifference(recording(twoLost), reference: reference, allowing: upToOneQuantum) != nil)
    }

    @Test("on PipeWire, steal forgives more quanta lost and longer silences; on PulseAudio nothing, steal or not")
    func stealOnPipeWire() {
        let quiet = MachineLoad.Change(seconds: 5, stealMilliseconds: 0)
        let stolen = MachineLoad.Change(seconds: 5, stealMilliseconds: 60)
        let lastLost = removing(frames: 3_000..<3_512, of: reference)
        let threeLost = removing(frames: 1_000..<1_512, of: removing(frames: 2_000..<2_512, of: lastLost))
        let longSilence = silencing(frames: 1_000..<3_048, of: reference)
        for heard in [threeLost, longSilence] {
            let difference = { (kind: PulseServer.Kind, load: MachineLoad.Change) in
                recordingDifference(recording(heard), reference: reference, allowing: kind.droppedQuanta(during: load))
            }
            #expect(difference(.pipeWire, quiet) != nil)
            #expect(difference(.pipeWire, stolen) == nil)
            #expect(difference(.pulseAudio, stolen) != nil)
        }
    }

    @Test("a clock's ticks due while the host held the CPUs are counted from steal, rounded up; none without it")
    func ticksStolen() {
        let stolen: MachineLoad.Change? = MachineLoad.Change(seconds: 5, stealMilliseconds: 380)
        #expect(stolen.ticksStolen(periodMilliseconds: 10) == 38)
        #expect(stolen.ticksStolen(periodMilliseconds: 100) == 4)
        let quiet: MachineLoad.Change? = MachineLoad.Change(seconds: 5, stealMilliseconds: 0)
        #expect(quiet.ticksStolen(periodMilliseconds: 10) == 0)
        let unknown: MachineLoad.Change? = nil
        #expect(unknown.ticksStolen(periodMilliseconds: 10) == 0)
    }

    @Test("the prefix before a pause may miss one quantum, but not sound that is not the reference's")
    func prefixBeforePause() {
        let before = Array(removing(frames: 300..<556, of: reference).prefix(4_000))
        #expect(droppedFrames(before, in: reference, allowing: upToOneQuantum) == 256)
        #expect(droppedFrames(before, in: reference, allowing: .none) == nil)
        #expect(droppedFrames(Array(reference.prefix(4_000)), in: reference, allowing: .none) == 0)
        #expect(droppedFrames(reference + [5, 5], in: reference, allowing: upToOneQuantum) == nil)
    }

    @Test("a clock's corrections (a frame inserted or dropped) are counted, and the frames around them must be exact")
    func corrections() {
        let exact = CorrectedMatch(recording: recording(reference), reference: reference)
        #expect((exact.heardFrames, exact.insertedFrames, exact.droppedFrames) == (4_000, 0, 0))
        #expect(exact.lostAtFrame == nil)
        var corrected = removing(frames: 3_000..<3_002, of: reference)
        corrected.insert(contentsOf: [5, 5], at: 1_000 * 2)
        let match = CorrectedMatch(recording: recording(corrected), reference: reference)
        #expect((match.heardFrames, match.insertedFrames, match.droppedFrames) == (3_998, 1, 2))
        #expect(match.lostAtFrame == nil)
        var changed = corrected
        changed[4_000] += 1
        #expect(CorrectedMatch(recording: recording(changed), reference: reference).lostAtFrame != nil)
        let cutShort = Array(reference.prefix(7_000))
        #expect(CorrectedMatch(recording: recording(cutShort), reference: reference).lostAtFrame == 3_500)
    }

    @Test("a glitch is told as where the recording parts from the reference, its silence, and what it skips there")
    func glitchDescriptions() {
        #expect(glitchDescription(reference, in: reference) == nil)
        #expect(glitchDescription(Array(reference.prefix(3_000)), in: reference) == nil)
        let silencedThenDropped = removing(frames: 2_000..<2_512, of: silencing(frames: 300..<556, of: reference))
        #expect(
            glitchDescription(silencedThenDropped, in: reference)
                == "parts at frame 300 (256 frames of silence), agrees again 256 frames of the reference on; "
                + "parts at frame 2000 (0 frames of silence), agrees again 512 frames of the reference on")
        var changed = reference
        changed[7_001] += 1
        #expect(
            glitchDescription(changed, in: reference)
                == "parts at frame 3500 (0 frames of silence), and never agrees again")
    }

    @Test("a glitch not forgiven is named with the reason: one too many, too long, at a join, or sound past the end")
    func glitchRefusals() {
        let dropped = removing(frames: 2_000..<2_512, of: reference)
        let forgiven = glitchReport(dropped, in: reference, allowing: upToOneQuantum)
        #expect(forgiven == glitchDescription(dropped, in: reference))
        #expect(
            glitchReport(dropped, in: reference, allowing: .none).contains(
                "refused: glitch 1 at frame 2000 of the recording, 2000 of the reference is one more than the 0 "
                    + "allowed"))
        let twice = removing(frames: 1_000..<1_512, of: dropped)
        #expect(
            glitchReport(twice, in: reference, allowing: upToOneQuantum).contains(
                "refused: glitch 1 at frame 1000 of the recording, 1000 of the reference: no run of up to 512 frames "
                    + "after which the two agree again to the end (nearest: 512 frames, then 488 agreeing)"))
        #expect(
            glitchReport(dropped, in: reference, allowing: GlitchAllowance(frames: 500)).contains(
                "refused: glitch 1 at frame 2000 of the recording, 2000 of the reference: no run of up to 500 frames "
                    + "after which the two agree again to the end (none came near)"))
        #expect(
            glitchReport(dropped, in: reference, allowing: upToOneQuantum.exceptAt(joins: [2_100])).contains(
                "refused: glitch 1 at frame 2000 of the recording, 2000 of the reference reaches the join at frame "
                    + "2100 of the reference"))
        #expect(
            glitchReport(dropped + reference.prefix(1_100), in: reference, allowing: upToOneQuantum).contains(
                "refused: the recording goes on 550 frames past the reference's end, 512 frames missing"))
    }

    @Test("a refused recording and its reference are kept sample for sample where asked, and nowhere otherwise")
    func keptRecordings() throws {
        let folder = Scratch.newFolder("kept") + "/refused"
        let heard = removing(frames: 2_000..<2_512, of: reference)
        #expect(KeptRecordings.keep(heard, reference: reference, in: folder).hasPrefix("; kept as \(folder)/refused-"))
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(names.count == 2)
        func samples(endingWith suffix: String) throws -> [Int16] {
            let name = try #require(names.first { $0.hasSuffix(suffix) })
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(name)")))
            return stride(from: 0, to: bytes.count - 1, by: 2).map {
                Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)
            }
        }
        #expect(try samples(endingWith: ".heard.s16") == heard)
        #expect(try samples(endingWith: ".reference.s16") == reference)
        #expect(KeptRecordings.keep(heard, reference: reference, in: nil) == "")
    }

    @Test("the start of a reference is found after other sound, also when a correction falls in its first frames")
    func locate() throws {
        let otherSound = (0..<1_000).map { Int16(-1 - $0) }
        let exact = try #require(CorrectedMatch.locate(reference, in: otherSound + reference))
        #expect(exact.frame == 500)
        #expect((exact.match.heardFrames, exact.match.insertedFrames, exact.match.droppedFrames) == (4_000, 0, 0))
        var corrected = removing(frames: 10..<11, of: reference)
        corrected.insert(contentsOf: [5, 5], at: 100 * 2)
        let found = try #require(CorrectedMatch.locate(reference, in: otherSound + recording(corrected)))
        #expect(found.frame == 500 + lead.count / 2)
        #expect((found.match.heardFrames, found.match.insertedFrames, found.match.droppedFrames) == (3_999, 1, 1))
        #expect(found.match.lostAtFrame == nil)
        #expect(CorrectedMatch.locate(reference, in: otherSound + lead) == nil)
    }

    @Test("a stream that goes on after a gap or from elsewhere is followed for as many jumps as allowed, and no more")
    func jumps() throws {
        let gap = [Int16](repeating: 0, count: 600)
        let gapped = Array(reference.prefix(4_000)) + gap + reference.dropFirst(4_000)
        let once = JumpedMatch(recording: recording(gapped), reference: reference, maximumJumps: 1)
        #expect(once.jumps.map { [$0.atFrame, $0.skipped, $0.heardInstead] } == [[2_000, 0, 300]])
        #expect(once.match.lostAtFrame == nil && once.accountedFrames == 4_000)
        let never = JumpedMatch(recording: recording(gapped), reference: reference, maximumJumps: 0)
        #expect(never.jumps.isEmpty && never.match.lostAtFrame == 2_000)
        let skipping = removing(frames: 3_000..<3_100, of: gapped)
        let twice = JumpedMatch(recording: recording(skipping), reference: reference, maximumJumps: 2)
        #expect(twice.jumps.map { [$0.atFrame, $0.skipped] } == [[2_000, 0], [2_700, 100]])
        #expect(twice.match.lostAtFrame == nil && twice.accountedFrames == 4_000)
        let otherSound = (0..<1_000).map { Int16(-1 - $0) }
        let located = try #require(CorrectedMatch.locate(reference, in: otherSound + gapped))
        #expect(located.match.lostAtFrame == 2_000)
        let continued = JumpedMatch(
            continuing: located.match, in: otherSound + gapped, of: reference, maximumJumps: 1)
        #expect(continued.jumps.map { [$0.atFrame, $0.skipped, $0.heardInstead] } == [[2_000, 0, 300]])
        #expect(continued.match.lostAtFrame == nil && continued.accountedFrames == 4_000)
    }
}

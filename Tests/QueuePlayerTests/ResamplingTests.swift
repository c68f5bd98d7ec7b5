import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// The left channel of interleaved stereo `samples`.
private func leftChannel(_ samples: [Float]) -> [Float] {
    stride(from: 0, to: samples.count - 1, by: 2).map { samples[$0] }
}

/// The frequency of a pure tone, from its rising zero crossings over `samples` at `rate`.
private func toneFrequency(_ samples: [Float], rate: Int) -> Double {
    let rising = samples.indices.dropLast().filter { samples[$0] < 0 && samples[$0 + 1] >= 0 }
    guard let first = rising.first, let last = rising.last, last > first else { return 0 }
    return Double(rising.count - 1) * Double(rate) / Double(last - first)
}

/// The root-mean-square level of `samples`, in dBFS.
private func rmsDecibels(_ samples: [Float]) -> Double {
    let meanSquare = samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)
    return 10 * log10(meanSquare)
}

@Suite("Items at another rate than the output's are resampled (libsoxr)", .tier(.deterministic))
struct ResamplingTests {
    @Test("a 48 kHz tone played at 44.1 kHz keeps its pitch, its length and its level")
    func pitchLengthAndLevel() throws {
        let source = try MPG123Decoder(url: Fixtures.mp3("tone-48k-1s"), logger: quietLogger)
        let sourceFrames = source.frameCount
        let sourceLeft = leftChannel(decodeAll(source).samples)
        let decoder = try ResampledDecoder(
            MPG123Decoder(url: Fixtures.mp3("tone-48k-1s"), logger: quietLogger), outputRate: 44_100)
        #expect(decoder.format == .stereo(sampleRate: 44_100))
        #expect(decoder.frameCount == sourceFrames * 44_100 / 48_000)
        let (samples, error) = decodeAll(decoder)
        #expect(error == nil)
        #expect(samples.count / 2 == decoder.frameCount, "decoded \(samples.count / 2) of \(decoder.frameCount)")
        let left = leftChannel(samples)
        // The middle, away from the encoder's fade-in and the end.
        let middle = Array(left[4_410..<39_690])
        let frequency = toneFrequency(middle, rate: 44_100)
        #expect(abs(frequency - 1_000) < 1, "the tone came out at \(frequency) Hz")
        let level = rmsDecibels(middle)
        let sourceLevel = rmsDecibels(Array(sourceLeft[4_800..<43_200]))
        #expect(abs(level - sourceLevel) < 0.05, "level \(level) dB against the source's \(sourceLevel) dB")
    }

    @Test("a seek lands at the same time in the resampled item, and the rest plays to its end")
    func seek() throws {
        let decoder = try ResampledDecoder(
            MPG123Decoder(url: Fixtures.mp3("tone-48k-1s"), logger: quietLogger), outputRate: 44_100)
        let whole = decodeAll(decoder).samples
        try decoder.seek(toFrame: 22_050)
        let rest = decodeAll(decoder).samples
        #expect(rest.count / 2 == decoder.frameCount - 22_050)
        // Half a second in, the tone is where the unseeked decode has it (the filter restarts: a few frames differ).
        let unseeked = leftChannel(Array(whole[(22_050 + 100) * 2..<(22_050 + 1_100) * 2]))
        let seeked = leftChannel(Array(rest[200..<2_200]))
        let largest = zip(unseeked, seeked).map { abs($0 - $1) }.max() ?? 1
        #expect(largest < 0.01, "the seeked audio differs by up to \(largest)")
        #expect(throws: DecoderError.self) { try decoder.seek(toFrame: decoder.frameCount + 1) }
    }

    @Test("on a sink that plays one rate, items of other rates join without a gap and same-rate items stay exact")
    func gaplessJoinsAcrossRates() async throws {
        let names = ["join-1", "tone-48k-1s", "mono-44k", "join-2"]
        let (events, samples) = try await playOnNullSink(names.map(Fixtures.mp3), outputSampleRate: 44_100)
        #expect(eventNames(events).filter { $0.hasPrefix("start") } == names.map { "start \($0)" })
        let tone = events.compactMap { event -> OpenedEntry? in
            guard case .itemStarted(let info) = event, info.entry.url.lastPathComponent == "tone-48k-1s.mp3" else {
                return nil
            }
            return info
        }.first
        #expect(tone?.format == .stereo(sampleRate: 44_100))
        let first = try Fixtures.referenceFloat("join-1")
        let mono = try Fixtures.referenceFloat("mono-44k")
        let last = try Fixtures.referenceFloat("join-2")
        let toneSamples = try #require(tone).frameCount * 2
        // Every frame is accounted for: a gap or an overlap at a join would move everything after it.
        #expect(samples.count == first.count + toneSamples + mono.count + last.count)
        #expect(sampleDifference(Array(samples.prefix(first.count)), first) == nil)
        let monoStart = first.count + toneSamples
        #expect(sampleDifference(Array(samples[monoStart..<monoStart + mono.count]), mono) == nil)
        #expect(sampleDifference(Array(samples.suffix(last.count)), last) == nil)
        // The resampled tone sounds at its pitch right from the join.
        let toneLeft = leftChannel(Array(samples[first.count..<monoStart]))
        let frequency = toneFrequency(Array(toneLeft[2_205...]), rate: 44_100)
        #expect(abs(frequency - 1_000) < 1, "the tone came out at \(frequency) Hz")
    }
}

import Foundation
import TestTiers
import Testing

@testable import QueuePlayer

/// A pure tone of `frequency` Hz at `amplitude`, stereo at `sampleRate`, computed in double precision: a source whose
/// every error is the resampler's.
private final class ToneSource: AudioDecoder {
    let url = URL(fileURLWithPath: "/tone")
    let format: AudioFormat
    let frameCount: Int
    let isLive = false
    let forwardBuffer: ForwardBuffer? = nil
    func takeStreamMarks() -> [StreamMark] { [] }
    let metadata = ItemMetadata()
    private let frequency: Double
    private let amplitude: Double
    private var position = 0

    init(frequency: Double, amplitude: Double, sampleRate: Int, seconds: Int) {
        self.frequency = frequency
        self.amplitude = amplitude
        format = .stereo(sampleRate: sampleRate)
        frameCount = sampleRate * seconds
    }

    func decode(into destination: inout MutableSpan<Float>) throws(DecoderError) -> Int {
        let frames = min(destination.count / 2, frameCount - position)
        for frame in 0..<frames {
            let phase = 2 * Double.pi * frequency * Double(position + frame) / Double(format.sampleRate)
            let sample = Float(amplitude * sin(phase))
            destination[2 * frame] = sample
            destination[2 * frame + 1] = sample
        }
        position += frames
        return frames
    }

    func seek(toFrame frame: Int) throws(DecoderError) { position = frame }
}

/// What a recipe does to a tone of `frequency` Hz resampled from 48 kHz to 44.1 kHz, each in dB relative to the tone
/// that went in: the tone that comes out, everything else, and everything that comes out.
private func resampledTone(
    _ frequency: Double, recipe: ResampledDecoder.Recipe
) throws -> (gain: Double, rest: Double, total: Double) {
    let amplitude = 0.5
    let decoder = try ResampledDecoder(
        ToneSource(frequency: frequency, amplitude: amplitude, sampleRate: 48_000, seconds: 2), outputRate: 44_100,
        recipe: recipe)
    let samples = decodeAll(decoder).samples
    // The middle second, away from the filter's start and end.
    let left = stride(from: 22_050, to: 66_150, by: 1).map { Double(samples[2 * $0]) }
    // The least-squares fit of a sine and a cosine at `frequency`: the tone that came out, and the residue.
    let omega = 2 * Double.pi * frequency / 44_100
    var (ss, cc, sc, xs, xc) = (0.0, 0.0, 0.0, 0.0, 0.0)
    for (index, x) in left.enumerated() {
        let (s, c) = (sin(omega * Double(index + 22_050)), cos(omega * Double(index + 22_050)))
        ss += s * s
        cc += c * c
        sc += s * c
        xs += x * s
        xc += x * c
    }
    let determinant = ss * cc - sc * sc
    let (a, b) = ((xs * cc - xc * sc) / determinant, (xc * ss - xs * sc) / determinant)
    var residue = 0.0
    for (index, x) in left.enumerated() {
        let phase = omega * Double(index + 22_050)
        let error = x - a * sin(phase) - b * cos(phase)
        residue += error * error
    }
    let inputPower = amplitude * amplitude / 2
    let tonePower = (a * a + b * b) / 2
    let restPower = residue / Double(left.count)
    return (
        10 * log10(tonePower / inputPower), 10 * log10(restPower / inputPower),
        10 * log10((tonePower + restPower) / inputPower)
    )
}

/// Alone under a sanitizer: there it resamples seconds of tones for seconds of a core, and under AddressSanitizer a
/// real-time skip test's boundary observer beside it was called over a second late.
@Suite("libsoxr's 16-bit recipe keeps what a 16-bit stream can carry", .tier(.deterministic, sanitized: .alone))
struct ResamplerRecipeTests {
    /// Each recipe's figures, 48 kHz to 44.1 kHz: the noise floor beside a 1 kHz tone, the passband (the gain at 19
    /// and 20 kHz), and what is left of a 23 kHz tone, above the output's Nyquist frequency (aliasing).
    @Test("passband, aliasing and noise floor of the 16-bit recipe, beside the 20-bit one it replaces")
    func recipeFigures() throws {
        var figures: [ResampledDecoder.Recipe: [String: Double]] = [:]
        for recipe in [ResampledDecoder.Recipe.sixteenBit, .twentyBit] {
            let tone = try resampledTone(1_000, recipe: recipe)
            let alias = try resampledTone(23_000, recipe: recipe)
            figures[recipe] = [
                "noise floor (dB)": tone.rest, "gain at 1 kHz (dB)": tone.gain,
                "gain at 19 kHz (dB)": try resampledTone(19_000, recipe: recipe).gain,
                "gain at 20 kHz (dB)": try resampledTone(20_000, recipe: recipe).gain,
                "23 kHz left (dB)": alias.total,
            ]
            let line = figures[recipe]!.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            print("resampler recipe \(recipe): \(line.joined(separator: ", "))")
        }
        let sixteen = try #require(figures[.sixteenBit])
        // Beside this tone (amplitude 0.5), a 16-bit stream's own rounding noise is at -92 dB: the recipe's noise and
        // aliasing (measured at -116 dB, against -135 dB with the 20-bit recipe) stay more than 10 dB below it.
        #expect(sixteen["noise floor (dB)"]! < -105)
        #expect(sixteen["23 kHz left (dB)"]! < -105)
        // Flat to 20 kHz, as the 20-bit recipe is (both measured within 0.01 dB).
        #expect(abs(sixteen["gain at 1 kHz (dB)"]!) < 0.001)
        #expect(abs(sixteen["gain at 19 kHz (dB)"]!) < 0.02)
        #expect(abs(sixteen["gain at 20 kHz (dB)"]!) < 0.02)
    }
}

import TestTiers
import Testing

@testable import QueuePlayer

@Suite("MediaTime: rational time with CMTime's semantics", .tier(.deterministic))
struct MediaTimeTests {
    @Test("equal rational values are equal and hash alike, whatever the timescale")
    func equality() {
        let half = MediaTime(value: 1, timescale: 2)
        let samples = MediaTime(value: 22_050, timescale: 44_100)
        #expect(half == samples)
        #expect(Set([half, samples]).count == 1)
        #expect(MediaTime(value: 10, timescale: 1000) != MediaTime(value: 1, timescale: 1000))
        #expect(MediaTime.zero == MediaTime(value: 0, timescale: 600))
    }

    @Test("the order is Core Media's: -inf < numeric < indefinite < +inf < invalid")
    func order() {
        let times: [MediaTime] = [
            .invalid, .positiveInfinity, .indefinite, MediaTime(value: 3, timescale: 2), .zero,
            MediaTime(value: -5, timescale: 1), .negativeInfinity,
        ]
        #expect(
            times.sorted().map(\.description) == [
                "-infinity", "-5.0 s (-5/1)", "0.0 s (0/1)", "1.5 s (3/2)", "indefinite", "+infinity", "invalid",
            ])
        #expect(MediaTime.invalid == MediaTime(value: 1, timescale: 0))
        // Exact even where Double would not be: 2^62 + 1 units of 1/3 s against 2^62 units of 1/3 s.
        #expect(MediaTime(value: (1 << 62) + 1, timescale: 3) > MediaTime(value: 1 << 62, timescale: 3))
    }

    @Test("seconds convert both ways, and the odd kinds say so")
    func seconds() {
        #expect(MediaTime(value: 1234, timescale: 100).seconds == 12.34)
        let fromSeconds = MediaTime(seconds: 0.01, preferredTimescale: 1000)
        #expect(fromSeconds == MediaTime(value: 10, timescale: 1000))
        #expect(!fromSeconds.hasBeenRounded)
        #expect(MediaTime(seconds: 1.0 / 3.0, preferredTimescale: 10).value == 3)
        #expect(MediaTime(seconds: 1.0 / 3.0, preferredTimescale: 10).hasBeenRounded)
        #expect(MediaTime(seconds: -0.25, preferredTimescale: 2).value == -1)
        #expect(MediaTime(seconds: .nan, preferredTimescale: 600) == .invalid)
        #expect(MediaTime(seconds: -.infinity, preferredTimescale: 600) == .negativeInfinity)
        #expect(MediaTime(seconds: 1e300, preferredTimescale: 600) == .positiveInfinity)
        #expect(MediaTime.indefinite.seconds.isNaN)
        #expect(MediaTime.positiveInfinity.seconds == .infinity)
    }

    @Test("a change of timescale rounds half away from zero and says it rounded")
    func convertScale() {
        let frames = MediaTime(value: 441, timescale: 44_100)
        #expect(frames.convertScale(1000) == MediaTime(value: 10, timescale: 1000))
        #expect(!frames.convertScale(1000).hasBeenRounded)
        let third = MediaTime(value: 1, timescale: 3).convertScale(1000)
        #expect(third.value == 333 && third.hasBeenRounded)
        #expect(MediaTime(value: -1, timescale: 4).convertScale(2).value == -1)
        #expect(MediaTime(value: 1, timescale: 4).convertScale(2).value == 1)
        #expect(MediaTime.indefinite.convertScale(1000) == .indefinite)
        #expect(MediaTime(value: .max, timescale: 1).convertScale(1000) == .positiveInfinity)
    }

    @Test("arithmetic is exact in a common timescale and follows CMTime for the odd kinds")
    func arithmetic() {
        let a = MediaTime(value: 1, timescale: 3)
        let b = MediaTime(value: 1, timescale: 4)
        let sum = a + b
        #expect(sum == MediaTime(value: 7, timescale: 12))
        #expect(sum.timescale == 12 && !sum.hasBeenRounded)
        #expect(a - b == MediaTime(value: 1, timescale: 12))
        #expect(-a == MediaTime(value: -1, timescale: 3))
        #expect(a * 3 == MediaTime(value: 1, timescale: 1))
        #expect(MediaTime.positiveInfinity + .negativeInfinity == .invalid)
        #expect(MediaTime.positiveInfinity + a == .positiveInfinity)
        #expect(MediaTime.indefinite + a == .indefinite)
        #expect(MediaTime.invalid + .positiveInfinity == .invalid)
        #expect(MediaTime.positiveInfinity - .positiveInfinity == .invalid)
        #expect(MediaTime.positiveInfinity * 0 == .invalid)
        #expect(MediaTime.negativeInfinity * -2 == .positiveInfinity)
        #expect(MediaTime(value: .max, timescale: 1) + MediaTime(value: 1, timescale: 1) == .positiveInfinity)
        #expect(MediaTime(value: .max / 2 + 1, timescale: 1) * 2 == .positiveInfinity)
        let coprime = MediaTime(value: 1, timescale: 2_147_483_647) + MediaTime(value: 1, timescale: 2_147_483_646)
        #expect(coprime.isNumeric && coprime.hasBeenRounded)
    }
}

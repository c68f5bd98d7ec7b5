import QueuePlayer

/// The value of MPD's `(AudioFormat == 'RATE:SAMPLE:CHANNELS')` filter, or with `=~` a mask where `*` matches any
/// (`'44100:*:*'`), read as mpd 0.23 reads it, with its words for what is wrong. A song's format is what the daemon
/// decodes it to: its rate, `f` (32-bit floating point) and 2 channels.
package struct MPDAudioFormatMask: Equatable {
    /// Nil where the mask says `*`.
    var sampleRate: Int?
    /// `f`, `8`, `16`, `24`, `32` or `dsd`; nil where the mask says `*`.
    var sample: String?
    var channels: Int?

    /// Reads `text`; with `mask`, a field may be `*`.
    init(_ text: String, mask: Bool) throws(MPDError) {
        var rest = Substring(text)
        if rest.hasPrefix("dsd"), let colon = rest.firstIndex(of: ":"),
            let dsd = Int(rest[rest.index(rest.startIndex, offsetBy: 3)..<colon]), (32...4096).contains(dsd),
            dsd % 2 == 0
        {
            (sampleRate, sample) = (dsd * 44_100 / 8, "dsd")
            rest = rest[rest.index(after: colon)...]
            channels = try Self.channelCount(&rest, mask: mask)
            try Self.expectEnd(rest)
            return
        }
        sampleRate = try Self.number(&rest, mask: mask, missing: "Failed to parse the sample rate") {
            rate throws(MPDError) in
            guard rate > 0, rate < 1 << 30 else { throw MPDError(.argument, "Invalid sample rate: \(rate)") }
        }
        try Self.expect(":", in: &rest, "Sample format missing")
        sample = try Self.sampleFormat(&rest, mask: mask)
        try Self.expect(":", in: &rest, "Channel count missing")
        channels = try Self.channelCount(&rest, mask: mask)
        try Self.expectEnd(rest)
    }

    /// True when a song decoded to `format` (floating point, stereo) fits the mask.
    func matches(_ format: AudioFormat) -> Bool {
        (sampleRate ?? format.sampleRate) == format.sampleRate && (sample ?? "f") == "f"
            && (channels ?? format.channelCount) == format.channelCount
    }

    private static func sampleFormat(_ rest: inout Substring, mask: Bool) throws(MPDError) -> String? {
        if mask, rest.hasPrefix("*") {
            rest = rest.dropFirst()
            return nil
        }
        for word in ["f", "dsd"] where rest.hasPrefix(word) {
            rest = rest.dropFirst(word.count)
            return word
        }
        let bits = try number(&rest, mask: false, missing: "Failed to parse the sample format") {
            bits throws(MPDError) in
            guard [8, 16, 24, 32].contains(bits) else { throw MPDError(.argument, "Invalid sample format: \(bits)") }
        }
        if bits == 24, rest.hasPrefix("_3") { rest = rest.dropFirst(2) }
        return bits.map(String.init)
    }

    private static func channelCount(_ rest: inout Substring, mask: Bool) throws(MPDError) -> Int? {
        try number(&rest, mask: mask, missing: "Failed to parse the channel count") { channels throws(MPDError) in
            guard (1...8).contains(channels) else { throw MPDError(.argument, "Invalid channel count: \(channels)") }
        }
    }

    /// The decimal number at the start of `rest` (nil for a mask's `*`), checked by `valid`.
    private static func number(
        _ rest: inout Substring, mask: Bool, missing: String, valid: (Int) throws(MPDError) -> Void
    ) throws(MPDError) -> Int? {
        if mask, rest.hasPrefix("*") {
            rest = rest.dropFirst()
            return nil
        }
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard let value = Int(digits) else { throw MPDError(.argument, missing) }
        rest = rest.dropFirst(digits.count)
        try valid(value)
        return value
    }

    private static func expect(_ separator: Character, in rest: inout Substring, _ missing: String) throws(MPDError) {
        guard rest.first == separator else { throw MPDError(.argument, missing) }
        rest = rest.dropFirst()
    }

    private static func expectEnd(_ rest: Substring) throws(MPDError) {
        guard rest.isEmpty else { throw MPDError(.argument, "Extra data after channel count: \(rest)") }
    }
}

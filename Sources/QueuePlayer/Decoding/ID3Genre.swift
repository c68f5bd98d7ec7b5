/// The genres ID3v1 numbers (0–79, the standard's own list), which ID3v2.3 taggers also write as `(17)` or `17` in
/// `TCON`.
enum ID3Genre {
    private static let names = [
        "Blues", "Classic Rock", "Country", "Dance", "Disco", "Funk", "Grunge", "Hip-Hop", "Jazz", "Metal", "New Age",
        "Oldies", "Other", "Pop", "R&B", "Rap", "Reggae", "Rock", "Techno", "Industrial", "Alternative", "Ska",
        "Death Metal", "Pranks", "Soundtrack", "Euro-Techno", "Ambient", "Trip-Hop", "Vocal", "Jazz+Funk", "Fusion",
        "Trance", "Classical", "Instrumental", "Acid", "House", "Game", "Sound Clip", "Gospel", "Noise", "AlternRock",
        "Bass", "Soul", "Punk", "Space", "Meditative", "Instrumental Pop", "Instrumental Rock", "Ethnic", "Gothic",
        "Darkwave", "Techno-Industrial", "Electronic", "Pop-Folk", "Eurodance", "Dream", "Southern Rock", "Comedy",
        "Cult", "Gangsta", "Top 40", "Christian Rap", "Pop/Funk", "Jungle", "Native American", "Cabaret", "New Wave",
        "Psychedelic", "Rave", "Showtunes", "Trailer", "Lo-Fi", "Tribal", "Acid Punk", "Acid Jazz", "Polka", "Retro",
        "Musical", "Rock & Roll", "Hard Rock",
    ]

    /// The genre numbered `number`; nil for 255 (none) and numbers beyond the list.
    static func name(number: Int) -> String? {
        names.indices.contains(number) ? names[number] : nil
    }

    /// A `TCON` value as a name: `(17)` and `17` become `Rock`, `(17)Rock` its text; any other text is kept.
    static func name(of value: String) -> String {
        var rest = Substring(value)
        var number: Int?
        if rest.hasPrefix("("), let close = rest.firstIndex(of: ")") {
            number = Int(rest[rest.index(after: rest.startIndex)..<close])
            rest = rest[rest.index(after: close)...]
        } else if let whole = Int(rest) {
            number = whole
            rest = ""
        }
        if !rest.isEmpty { return String(rest) }
        return number.flatMap(name(number:)) ?? value
    }
}

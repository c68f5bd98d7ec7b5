import FoundationEssentials

/// Reads one of MPD 0.21's filter expressions, with MPD's words for what is wrong in it (see ``MPDSongFilter``).
struct MPDFilterParser {
    private var rest: Substring
    private let foldsCase: Bool

    init(_ text: Substring, foldsCase: Bool) {
        rest = text
        self.foldsCase = foldsCase
    }

    /// The expression that is the whole text.
    mutating func expressionToEnd() throws(MPDError) -> MPDSongFilter {
        let filter = try expression()
        guard rest.isEmpty else { throw MPDError(.argument, "Unparsed garbage after expression") }
        return filter
    }

    /// `(` … `)`, the text starting at its opening parenthesis.
    private mutating func expression() throws(MPDError) -> MPDSongFilter {
        try expect("(", "'(' expected")
        if rest.hasPrefix("(") {
            var filters = [try expression()]
            while !rest.hasPrefix(")") {
                guard try word() == "AND" else { throw MPDError(.argument, "'AND' expected") }
                filters.append(try expression())
            }
            try expect(")", "')' expected")
            return filters.count == 1 ? filters[0] : .and(filters)
        }
        if rest.hasPrefix("!") {
            skip(1)
            guard rest.hasPrefix("(") else { throw MPDError(.argument, "'(' expected") }
            let inner = try expression()
            try expect(")", "')' expected")
            return .not(inner)
        }
        let name = try word()
        let filter: MPDSongFilter
        switch try MPDFilterType(name) {
        case .base: filter = .base(try quoted())
        case .modifiedSince: filter = .modifiedSince(try Self.timeStamp(try quoted()))
        case .audioFormat: filter = .audioFormat(try audioFormat())
        case .file: filter = .file(try stringMatch())
        case .any: filter = .any(try stringMatch())
        case .tag(let tag): filter = .tag(tag, try stringMatch())
        }
        try expect(")", "')' expected")
        return filter
    }

    /// The operator and quoted value of a comparison.
    private mutating func stringMatch() throws(MPDError) -> MPDStringMatch {
        for (word, foldsCase, position, negated) in Self.wordOperators {
            guard rest.lowercased().hasPrefix(word) else { continue }
            skip(word.count)
            return MPDStringMatch(
                value: try quoted(), foldsCase: foldsCase ?? self.foldsCase, position: position, negated: negated)
        }
        for (symbol, negated) in [("=~", false), ("!~", true)] where rest.hasPrefix(symbol) {
            skip(2)
            let value = try quoted()
            do {
                var pattern = try Regex(value)
                if foldsCase { pattern = pattern.ignoresCase() }
                return MPDStringMatch(
                    value: value, foldsCase: foldsCase, position: .anywhere, negated: negated, pattern: pattern)
            } catch {
                throw MPDError(.argument, "Invalid regular expression: \(value)")
            }
        }
        for (symbol, negated) in [("==", false), ("!=", true)] where rest.hasPrefix(symbol) {
            skip(2)
            return MPDStringMatch(value: try quoted(), foldsCase: foldsCase, position: .whole, negated: negated)
        }
        throw MPDError(.argument, "'==' or '!=' expected")
    }

    /// `== 'RATE:SAMPLE:CHANNELS'`, or `=~` and a mask.
    private mutating func audioFormat() throws(MPDError) -> MPDAudioFormatMask {
        let mask: Bool
        if rest.hasPrefix("==") {
            mask = false
        } else if rest.hasPrefix("=~") {
            mask = true
        } else {
            throw MPDError(.argument, "'==' or '=~' expected")
        }
        skip(2)
        return try MPDAudioFormatMask(try quoted(), mask: mask)
    }

    /// The operators that are words: each with the case folding it fixes (nil: the command's), where it looks, and
    /// whether it is negated.
    private static let wordOperators: [(String, Bool?, MPDStringMatch.Position, Bool)] = [
        ("contains_cs ", false, .anywhere, false), ("!contains_cs ", false, .anywhere, true),
        ("contains_ci ", true, .anywhere, false), ("!contains_ci ", true, .anywhere, true),
        ("starts_with_cs ", false, .prefix, false), ("!starts_with_cs ", false, .prefix, true),
        ("starts_with_ci ", true, .prefix, false), ("!starts_with_ci ", true, .prefix, true),
        ("eq_cs ", false, .whole, false), ("!eq_cs ", false, .whole, true),
        ("eq_ci ", true, .whole, false), ("!eq_ci ", true, .whole, true),
        ("contains ", nil, .anywhere, false), ("!contains ", nil, .anywhere, true),
        ("starts_with ", nil, .prefix, false), ("!starts_with ", nil, .prefix, true),
    ]

    /// A word of letters, `_` and `-`, and the blanks after it.
    private mutating func word() throws(MPDError) -> String {
        let word = rest.prefix { $0.isASCII && ($0.isLetter || $0 == "_" || $0 == "-") }
        guard !word.isEmpty else { throw MPDError(.argument, "Word expected") }
        skip(word.count)
        return String(word)
    }

    /// A value in single or double quotes, a backslash taking the next character as it is, and the blanks after it.
    private mutating func quoted() throws(MPDError) -> String {
        guard let quote = rest.first, quote == "'" || quote == "\"" else {
            throw MPDError(.argument, "Quoted string expected")
        }
        rest = rest.dropFirst()
        var value = ""
        while true {
            guard var character = rest.first else { throw MPDError(.argument, "Closing quote not found") }
            if character == quote { break }
            if character == "\\" {
                rest = rest.dropFirst()
                guard let escaped = rest.first else { throw MPDError(.argument, "Closing quote not found") }
                character = escaped
            }
            value.append(character)
            rest = rest.dropFirst()
        }
        skip(1)
        return value
    }

    private mutating func expect(_ text: String, _ message: String) throws(MPDError) {
        guard rest.hasPrefix(text) else { throw MPDError(.argument, message) }
        skip(text.count)
    }

    /// Drops `count` characters and the blanks after them.
    private mutating func skip(_ count: Int) {
        rest = rest.dropFirst(count).drop { $0 == " " || $0 == "\t" }
    }

    /// A time as MPD reads one: ISO 8601 (`2024-05-01T12:00:00Z`, or a date alone), or seconds since 1970.
    static func timeStamp(_ text: String) throws(MPDError) -> Date {
        if let seconds = UInt64(text) { return Date(timeIntervalSince1970: Double(seconds)) }
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text + "T00:00:00Z", strategy: .iso8601) { return date }
        throw MPDError(.argument, "Failed to parse time stamp: \(text)")
    }
}

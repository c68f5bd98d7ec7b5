import FoundationEssentials

/// A song filter of MPD's `find`, `search`, `list` and `count`: MPD 0.21's expressions (`(Artist == 'X')`, `(Album
/// contains 'x')`, `(Title =~ 'regex')`, `(!EXPR)`, `(EXPR AND EXPR)`, `(base 'folder')`, `(modified-since 'T')`,
/// `(file == 'path')`, `(any contains 'x')`) and the older `TAG VALUE` pairs, all of which must match.
///
/// A tag a song lacks matches the empty value; `AlbumArtist` falls back to `Artist`. Threading: made and used by one
/// command (a regular expression's `Regex` is not `Sendable`).
package indirect enum MPDSongFilter {
    case tag(String, MPDStringMatch)
    case file(MPDStringMatch)
    case any(MPDStringMatch)
    case base(String)
    case modifiedSince(Date)
    case audioFormat(MPDAudioFormatMask)
    case not(MPDSongFilter)
    case and([MPDSongFilter])

    /// The filter `arguments` make: each an expression in parentheses or a `TAG VALUE` pair. `foldsCase`: `search`'s
    /// case-insensitive matching (and, in a pair, matching anywhere in the value, as MPD 0.20 did).
    package static func parse(_ arguments: [String], foldsCase: Bool) throws(MPDError) -> MPDSongFilter {
        guard !arguments.isEmpty else { throw MPDError(.argument, "Incorrect number of filter arguments") }
        var filters: [MPDSongFilter] = []
        var rest = arguments[...]
        while let first = rest.first {
            if first.hasPrefix("(") {
                var parser = MPDFilterParser(first[...], foldsCase: foldsCase)
                filters.append(try parser.expressionToEnd())
                rest = rest.dropFirst()
                continue
            }
            guard rest.count >= 2 else { throw MPDError(.argument, "Incorrect number of filter arguments") }
            let value = rest[rest.index(after: rest.startIndex)]
            filters.append(try pair(first, value, foldsCase: foldsCase))
            rest = rest.dropFirst(2)
        }
        return filters.count == 1 ? filters[0] : .and(filters)
    }

    private static func pair(_ type: String, _ value: String, foldsCase: Bool) throws(MPDError) -> MPDSongFilter {
        let match = MPDStringMatch(value: value, foldsCase: foldsCase, position: foldsCase ? .anywhere : .whole)
        let filterType: MPDFilterType
        do throws(MPDError) {
            filterType = try MPDFilterType(type)
        } catch {
            throw MPDError(.argument, "Unknown filter type")
        }
        switch filterType {
        case .file: return .file(match)
        case .any: return .any(match)
        case .base: return .base(value)
        case .modifiedSince: return .modifiedSince(try MPDFilterParser.timeStamp(value))
        // mpd 0.23 takes the word here and then matches nothing it could name: refused.
        case .audioFormat: throw MPDError(.argument, "Unknown filter type")
        case .tag(let name): return .tag(name, match)
        }
    }

    /// True when `song` passes.
    func matches(_ song: IndexedSong) -> Bool {
        switch self {
        case .tag(let name, let match): match.matches(MPDSongTags.values(of: name, in: song))
        case .file(let match): match.matches([song.path])
        case .any(let match): match.matches(MPDSongTags.allValues(of: song))
        case .base(let folder): MusicIndex.path(song.path, isUnder: folder)
        case .modifiedSince(let date): song.modified > date
        case .audioFormat(let mask): mask.matches(song.description.format)
        case .not(let filter): !filter.matches(song)
        case .and(let filters): filters.allSatisfy { $0.matches(song) }
        }
    }
}

/// What a filter compares a tag's values with.
package struct MPDStringMatch {
    package enum Position: Sendable {
        case whole, anywhere, prefix
    }

    var value: String
    var foldsCase: Bool
    var position: Position
    var negated = false
    /// For `=~` and `!~`: the pattern, searched for anywhere in a value.
    var pattern: Regex<AnyRegexOutput>? = nil

    /// True when one of `values` matches (none does, when negated); a tag the song lacks is the empty value.
    func matches(_ values: [String]) -> Bool {
        let values = values.isEmpty ? [""] : values
        return values.contains(where: matchesValue) != negated
    }

    private func matchesValue(_ candidate: String) -> Bool {
        if let pattern { return (try? pattern.firstMatch(in: candidate)) != nil }
        let (candidate, value) = foldsCase ? (candidate.lowercased(), value.lowercased()) : (candidate, value)
        switch position {
        case .whole: return candidate == value
        case .anywhere: return value.isEmpty || candidate.contains(value)
        case .prefix: return candidate.hasPrefix(value)
        }
    }
}

/// What a filter's first word names.
enum MPDFilterType: Equatable {
    case file, any, base, modifiedSince, audioFormat
    /// A tag, by its MPD name.
    case tag(String)

    init(_ word: String) throws(MPDError) {
        switch word.lowercased() {
        case "file", "filename": self = .file
        case "any": self = .any
        case _ where word == "base": self = .base
        case _ where word == "modified-since": self = .modifiedSince
        case "audioformat": self = .audioFormat
        default:
            guard let name = MPDTags.mpdName(word) else {
                throw MPDError(.argument, "Unknown filter type: \(word)")
            }
            self = .tag(name)
        }
    }
}

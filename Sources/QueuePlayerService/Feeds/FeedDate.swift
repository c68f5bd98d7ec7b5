import FoundationEssentials

/// The dates feeds write: RFC 822's in RSS (`Wed, 02 Oct 2002 13:00:00 GMT`, or with `+0200`), RFC 3339's in Atom
/// (`2003-12-13T18:30:02Z`). Pure functions, for any thread.
enum FeedDate {
    /// The date `text` names, or nil when it is neither form.
    static func parse(_ text: String) -> Date? {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return rfc3339(text) ?? rfc822(text)
    }

    private static func rfc3339(_ text: String) -> Date? {
        try? Date(text, strategy: .iso8601)
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let zones: [String: Int] = [
        "gmt": 0, "ut": 0, "utc": 0, "z": 0, "est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7, "mdt": -6,
        "pst": -8, "pdt": -7,
    ]

    /// `[Day, ]DD Mon YYYY HH:MM[:SS] ZONE`.
    private static func rfc822(_ text: String) -> Date? {
        var parts = text.split(whereSeparator: \.isWhitespace).map { $0.lowercased() }
        if parts.first?.hasSuffix(",") == true { parts.removeFirst() }
        guard parts.count >= 4, let day = Int(parts[0]), let month = months.firstIndex(of: String(parts[1].prefix(3))),
            var year = Int(parts[2])
        else { return nil }
        if year < 100 { year += year < 50 ? 2000 : 1900 }
        let clock = parts[3].split(separator: ":").compactMap { Int($0) }
        guard clock.count >= 2 else { return nil }
        var offset = 0
        if parts.count > 4 {
            let zone = parts[4]
            if let hours = zones[zone] {
                offset = hours * 3600
            } else if let value = Int(zone), zone.count == 5 {
                offset = (value / 100) * 3600 + (value % 100) * 60
            } else {
                return nil
            }
        }
        let seconds =
            daysFromCivil(year: year, month: month + 1, day: day) * 86_400 + clock[0] * 3600
            + clock[1] * 60 + (clock.count > 2 ? clock[2] : 0) - offset
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Days from 1970-01-01 to the given day of the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

/// playerctl's `--format` templates: `{{artist}} - {{title}} {{duration(position)}}`.
///
/// A `{{ }}` holds a variable (`artist`, `title`, `album`, `position`, `status`, `volume`, `playerName`, or any
/// metadata key such as `xesam:url` or `mpris:length`), a quoted string, or one of the functions `lc(…)`, `uc(…)`,
/// `duration(…)` (microseconds as `m:ss` or `h:mm:ss`) and `default(…, …)`. Unknown variables are empty.
package struct MetadataTemplate {
    package let text: String

    /// The template `text`, parsed as it is rendered.
    package init(text: String) { self.text = text }

    /// The template filled in from `values`.
    package func render(_ values: [String: String]) -> String {
        var output = ""
        var rest = Substring(text)
        while let open = rest.firstRange(of: "{{") {
            output += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].firstRange(of: "}}") else {
                output += rest[open.lowerBound...]
                return output
            }
            output += evaluate(rest[open.upperBound..<close.lowerBound].trimmingSpaces, values)
            rest = rest[close.upperBound...]
        }
        return output + rest
    }

    private func evaluate(_ expression: Substring, _ values: [String: String]) -> String {
        if expression.count >= 2, let quote = expression.first, quote == "\"" || quote == "'",
            expression.last == quote
        {
            return String(expression.dropFirst().dropLast())
        }
        guard let open = expression.firstIndex(of: "("), expression.last == ")" else {
            return values[String(expression)] ?? ""
        }
        let name = expression[..<open].trimmingSpaces
        let arguments = expression[expression.index(after: open)..<expression.index(before: expression.endIndex)]
            .split(separator: ",").map { evaluate($0.trimmingSpaces, values) }
        switch (name, arguments.count) {
        case ("lc", 1): return arguments[0].lowercased()
        case ("uc", 1): return arguments[0].uppercased()
        case ("duration", 1): return Int64(arguments[0]).map(Self.duration) ?? ""
        case ("default", 2): return arguments[0].isEmpty ? arguments[1] : arguments[0]
        default: return ""
        }
    }

    /// Microseconds as `m:ss`, or `h:mm:ss` from an hour on.
    package static func duration(_ microseconds: Int64) -> String {
        let total = max(0, microseconds / 1_000_000)
        let (hours, minutes, seconds) = (total / 3600, total / 60 % 60, total % 60)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(seconds))" : "\(minutes):\(two(seconds))"
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        drop { $0 == " " }.reversed().drop { $0 == " " }.reversed().reduce(into: "") { $0.append($1) }[...]
    }
}

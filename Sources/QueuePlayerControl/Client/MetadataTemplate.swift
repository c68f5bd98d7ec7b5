import FoundationEssentials
import Glibc

/// The standard playerctl's `--format` templates (as in Debian's playerctl 2.4.1): `{{artist}} - {{title}}
/// {{duration(position)}}`.
///
/// Text outside `{{ }}` is printed as it is. Inside, an expression: variables (`title`, `artist`, `album`,
/// `status`, `position` and `mpris:length` in microseconds, `volume`, `playerName`, `playerInstance`, or any
/// metadata key such as `xesam:url`; unknown ones are empty), numbers, double-quoted strings (commas allowed, no
/// escapes), `+ - * /` on numbers with the usual precedence and parentheses, unary `-`, and the functions `lc`,
/// `uc`, `duration`, `markup_escape`, `default`, `emoji` and `trunc`. Numbers print as playerctl prints them:
/// integers as they are, other numbers with 17 significant digits and at least one decimal (`3.0`, `0.5`). A
/// template that cannot be evaluated throws a ``TemplateError`` worded as playerctl words it.
package struct MetadataTemplate {
    package let text: String

    /// The template `text`, parsed as it is rendered.
    package init(text: String) { self.text = text }

    /// A value a template handles: playerctl keeps integers (positions, lengths) apart from other numbers.
    package enum Value: Equatable {
        case string(String)
        case integer(Int64)
        case number(Double)

        /// The value as printed.
        package var text: String {
            switch self {
            case .string(let string): string
            case .integer(let integer): String(integer)
            case .number(let number): Self.format(number)
            }
        }

        /// playerctl's type letters, for its error messages.
        var typeCode: String {
            switch self {
            case .string: "s"
            case .integer: "x"
            case .number: "d"
            }
        }

        /// `%.17g`, with `.0` added to a whole number, as GLib prints a double.
        static func format(_ number: Double) -> String {
            var buffer = [CChar](repeating: 0, count: 64)
            _ = withVaList([number]) { vsnprintf(&buffer, buffer.count, "%.17g", $0) }
            let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return text.contains(where: { ".eninf".contains($0) }) ? text : text + ".0"
        }
    }

    /// Why a template could not be rendered, in playerctl's words.
    package struct TemplateError: Error, CustomStringConvertible {
        package let description: String
    }

    /// The template filled in from `values`.
    package func render(_ values: [String: Value]) throws(TemplateError) -> String {
        var output = ""
        let characters = Array(text.unicodeScalars)
        var index = 0
        while index < characters.count {
            if characters[index] == "{", index + 1 < characters.count, characters[index + 1] == "{" {
                var parser = ExpressionParser(characters: characters, position: index + 2, values: values)
                output += try parser.parseBlock().text
                index = parser.position
            } else {
                output.unicodeScalars.append(characters[index])
                index += 1
            }
        }
        return output
    }

    /// Microseconds as `m:ss`, or `h:mm:ss` from an hour on.
    package static func duration(_ microseconds: Int64) -> String {
        let total = max(0, microseconds / 1_000_000)
        let (hours, minutes, seconds) = (total / 3600, total / 60 % 60, total % 60)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(seconds))" : "\(minutes):\(two(seconds))"
    }
}

import FoundationEssentials

extension MetadataTemplate {
    typealias Scalars = [Unicode.Scalar]

    /// Parses and evaluates one `{{ … }}` block (recursive descent: sums of products of unary terms), with
    /// playerctl's error messages. Positions in messages count characters of the whole template from 0.
    struct ExpressionParser {
        let characters: Scalars
        /// The next character to read; after ``parseBlock()``, the one after the closing `}}`.
        var position: Int
        let values: [String: Value]
        /// How many sums and unary minuses are being parsed inside one another.
        private var nesting = 0
        /// Deeper nesting is refused: each level is a recursion, and 2,000 characters of `(` overflowed the stack
        /// (found by scripts/fuzz).
        static let maximumNesting = 100

        init(characters: Scalars, position: Int, values: [String: Value]) {
            self.characters = characters
            self.position = position
            self.values = values
        }

        /// An evaluated expression, and the variable it names when it is only that (what `emoji` needs).
        struct Operand {
            var value: Value
            var variable: String?
        }

        mutating func parseBlock() throws(TemplateError) -> Value {
            let operand = try parseSum()
            skipSpaces()
            guard position < characters.count else { throw TemplateError(description: "unexpected end of expression") }
            guard position + 1 < characters.count, characters[position] == "}", characters[position + 1] == "}" else {
                throw TemplateError(description: "expecting \"}}\" (position \(position))")
            }
            position += 2
            return operand.value
        }

        /// Parses one more level down with `parse`, or throws once ``maximumNesting`` levels are open.
        private mutating func nested(
            _ parse: (inout Self) throws(TemplateError) -> Operand
        ) throws(TemplateError)
            -> Operand
        {
            guard nesting < Self.maximumNesting else {
                throw TemplateError(description: "expression nested too deeply (position \(position))")
            }
            nesting += 1
            defer { nesting -= 1 }
            return try parse(&self)
        }

        private mutating func parseSum() throws(TemplateError) -> Operand {
            try nested { parser throws(TemplateError) in try parser.parseTerms() }
        }

        private mutating func parseTerms() throws(TemplateError) -> Operand {
            var left = try parseProduct()
            while let symbol = nextOperator(in: "+-") {
                let right = try parseProduct()
                left = Operand(value: try Self.apply(symbol, left.value, right.value), variable: nil)
            }
            return left
        }

        private mutating func parseProduct() throws(TemplateError) -> Operand {
            var left = try parseUnary()
            while let symbol = nextOperator(in: "*/") {
                let right = try parseUnary()
                left = Operand(value: try Self.apply(symbol, left.value, right.value), variable: nil)
            }
            return left
        }

        private mutating func parseUnary() throws(TemplateError) -> Operand {
            skipSpaces()
            guard peek == "-" else { return try parsePrimary() }
            position += 1
            let operand = try nested { parser throws(TemplateError) in try parser.parseUnary() }
            return Operand(value: try Self.apply("*", .number(-1), operand.value), variable: nil)
        }

        private mutating func parsePrimary() throws(TemplateError) -> Operand {
            skipSpaces()
            guard let first = peek else { throw TemplateError(description: "unexpected end of expression") }
            if first == "(" {
                position += 1
                let inner = try parseSum()
                try expect(")")
                return Operand(value: inner.value, variable: nil)
            }
            if first == "\"" {
                let start = position + 1
                guard let end = characters[start...].firstIndex(of: "\"") else {
                    throw TemplateError(description: "unexpected end of expression")
                }
                position = end + 1
                return Operand(value: .string(Self.string(characters[start..<end])), variable: nil)
            }
            if first.properties.numericType != nil, first.isASCII {
                let start = position
                while let next = peek, next.isASCII, next.properties.numericType != nil || next == "." { position += 1 }
                return Operand(value: .number(Double(Self.string(characters[start..<position])) ?? 0), variable: nil)
            }
            guard first.isASCII, first.properties.isAlphabetic || first == "_" else {
                throw TemplateError(description: "unexpected \"\(first)\", expected expression (position \(padded))")
            }
            let start = position
            while let next = peek, next.isASCII,
                next.properties.isAlphabetic || next.properties.numericType != nil
                    || next == "_" || next == ":"
            {
                position += 1
            }
            let name = Self.string(characters[start..<position])
            skipSpaces()
            guard peek == "(" else { return Operand(value: values[name] ?? .string(""), variable: name) }
            position += 1
            return Operand(value: try call(name, with: try parseArguments()), variable: nil)
        }

        private mutating func parseArguments() throws(TemplateError) -> [Operand] {
            skipSpaces()
            if peek == ")" {
                position += 1
                return []
            }
            var arguments = [try parseSum()]
            skipSpaces()
            while peek == "," {
                position += 1
                arguments.append(try parseSum())
                skipSpaces()
            }
            try expect(")")
            return arguments
        }

        private func call(_ name: String, with arguments: [Operand]) throws(TemplateError) -> Value {
            let unary = ["lc", "uc", "duration", "markup_escape", "emoji"]
            let binary = ["default", "trunc"]
            guard unary.contains(name) || binary.contains(name) else {
                throw TemplateError(description: "unknown template function: \(name)")
            }
            let expected = unary.contains(name) ? 1 : 2
            guard arguments.count == expected else {
                throw TemplateError(
                    description: "function \(name) takes exactly \(expected == 1 ? "one argument" : "two arguments") "
                        + "(got \(arguments.count))")
            }
            let first = arguments[0].value
            switch name {
            case "lc": return .string(first.text.lowercased())
            case "uc": return .string(first.text.uppercased())
            case "duration":
                // Of text (an unknown variable is empty text), nothing, as in playerctl.
                if case .string = first { return .string("") }
                return .string(MetadataTemplate.duration(Self.integer(first)))
            case "markup_escape": return .string(Self.markupEscaped(first.text))
            case "default": return first.text.isEmpty ? arguments[1].value : first
            case "trunc":
                // A negative length leaves the text whole, as in playerctl.
                let limit = Int(Self.integer(arguments[1].value))
                return limit >= 0 && first.text.count > limit ? .string(first.text.prefix(limit) + "…") : first
            default:
                guard let variable = arguments[0].variable else {
                    throw TemplateError(description: "the emoji function can only be called with a variable")
                }
                return .string(Self.emoji(for: variable, first))
            }
        }

        private static func emoji(for variable: String, _ value: Value) -> String {
            switch (variable, value) {
            case ("status", .string("Playing")): "▶️"
            case ("status", .string("Paused")): "⏸️"
            case ("status", .string("Stopped")): "⏹️"
            case ("volume", .number(let level)): level < 1.0 / 3 ? "🔈" : level < 2.0 / 3 ? "🔉" : "🔊"
            default: value.text
            }
        }

        private static func apply(
            _ symbol: Unicode.Scalar, _ left: Value, _ right: Value
        ) throws(TemplateError)
            -> Value
        {
            func unsupported() -> TemplateError {
                TemplateError(
                    description: "Got unsupported operand types for \(symbol): '\(left.typeCode)' and "
                        + "'\(right.typeCode)'")
            }
            if case .integer(let a) = left, case .integer(let b) = right, symbol != "/" {
                switch symbol {
                case "+": return .integer(a &+ b)
                case "-": return .integer(a &- b)
                default: return .integer(a &* b)
                }
            }
            guard let a = number(left), let b = number(right) else { throw unsupported() }
            switch symbol {
            case "+": return .number(a + b)
            case "-": return .number(a - b)
            case "*": return .number(a * b)
            default:
                guard b != 0 else { throw TemplateError(description: "Divide by zero error") }
                return .number(a / b)
            }
        }

        private static func number(_ value: Value) -> Double? {
            switch value {
            case .integer(let integer): Double(integer)
            case .number(let number): number
            case .string: nil
            }
        }

        /// A value as a whole number (for `duration` and `trunc`): strings and infinities count as 0, numbers beyond
        /// 64 bits as the nearest that fits (`duration(-1e300)` crashed the client before).
        private static func integer(_ value: Value) -> Int64 {
            switch value {
            case .integer(let integer): integer
            case .number(let number): number.isFinite ? Int64(max(-0x1p63, min(0x1p63.nextDown, number))) : 0
            case .string: 0
            }
        }

        private static func markupEscaped(_ text: String) -> String {
            var escaped = ""
            for character in text {
                switch character {
                case "&": escaped += "&amp;"
                case "<": escaped += "&lt;"
                case ">": escaped += "&gt;"
                case "'": escaped += "&apos;"
                case "\"": escaped += "&quot;"
                default: escaped.append(character)
                }
            }
            return escaped
        }

        private static func string(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
            var string = ""
            string.unicodeScalars.append(contentsOf: scalars)
            return string
        }

        private var peek: Unicode.Scalar? { position < characters.count ? characters[position] : nil }

        /// The position as playerctl prints it in "unexpected" messages: two columns wide.
        private var padded: String { position < 10 ? " \(position)" : "\(position)" }

        private mutating func skipSpaces() {
            while let next = peek, next == " " || next == "\t" || next == "\n" { position += 1 }
        }

        private mutating func nextOperator(in symbols: String) -> Unicode.Scalar? {
            skipSpaces()
            guard let next = peek, symbols.unicodeScalars.contains(next) else { return nil }
            position += 1
            return next
        }

        private mutating func expect(_ symbol: Unicode.Scalar) throws(TemplateError) {
            skipSpaces()
            guard peek == symbol else {
                guard peek != nil else { throw TemplateError(description: "unexpected end of expression") }
                throw TemplateError(description: "expecting \"\(symbol)\" (position \(position))")
            }
            position += 1
        }
    }
}

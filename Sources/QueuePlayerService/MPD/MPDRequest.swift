/// One command line from an MPD client, split as MPD's tokenizer splits it: a name of lower-case letters, digits and
/// underscores, then arguments separated by blanks, each either unquoted (printable, no quotes) or in double quotes,
/// where a backslash takes the next character as it is.
package struct MPDRequest: Equatable, Sendable {
    package var name: String
    package var arguments: [String]

    package init(name: String, arguments: [String] = []) {
        self.name = name
        self.arguments = arguments
    }

    /// The request `line` (without its newline) holds. Throws MPD's errors, with MPD's words, for a line that is not
    /// a command (``MPDError/Code/unknown``): no name or a name that is not a word (which also close the connection,
    /// as MPD does: the client does not speak the protocol), an unterminated quote, a quote followed by something other
    /// than a blank, a quote inside an unquoted argument.
    package static func parse(_ line: Substring) throws(MPDError) -> MPDRequest {
        var rest = line.utf8[...]
        func skipBlanks() { rest = rest.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") } }
        skipBlanks()
        let word = rest.prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        guard let first = word.first else { throw MPDError(.unknown, "No command given", closesConnection: true) }
        guard isWordStart(first) else { throw MPDError(.unknown, "Letter expected", closesConnection: true) }
        guard word.allSatisfy(isWordCharacter) else {
            throw MPDError(.unknown, "Invalid word character", closesConnection: true)
        }
        var request = MPDRequest(name: String(decoding: word, as: UTF8.self))
        rest = rest.dropFirst(word.count)
        skipBlanks()
        while !rest.isEmpty {
            if rest.first == UInt8(ascii: "\"") {
                request.arguments.append(try quoted(&rest))
            } else {
                let argument = rest.prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
                guard argument.allSatisfy(isUnquotedCharacter) else {
                    throw MPDError(.unknown, "Invalid unquoted character")
                }
                request.arguments.append(String(decoding: argument, as: UTF8.self))
                rest = rest.dropFirst(argument.count)
            }
            skipBlanks()
        }
        return request
    }

    /// Reads a quoted argument at the start of `rest` (its opening quote) and moves `rest` past it.
    private static func quoted(_ rest: inout Substring.UTF8View.SubSequence) throws(MPDError) -> String {
        var bytes: [UInt8] = []
        var index = rest.index(after: rest.startIndex)
        while true {
            guard index < rest.endIndex else { throw MPDError(.unknown, "Missing closing '\"'") }
            var byte = rest[index]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") {
                index = rest.index(after: index)
                guard index < rest.endIndex else { throw MPDError(.unknown, "Missing closing '\"'") }
                byte = rest[index]
            }
            bytes.append(byte)
            index = rest.index(after: index)
        }
        index = rest.index(after: index)
        if index < rest.endIndex, rest[index] != UInt8(ascii: " "), rest[index] != UInt8(ascii: "\t") {
            throw MPDError(.unknown, "Space expected after closing '\"'")
        }
        rest = rest[index...]
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func isWordStart(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }

    private static func isWordCharacter(_ byte: UInt8) -> Bool {
        isWordStart(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
    }

    private static func isUnquotedCharacter(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "'")
    }
}

import FoundationEssentials

/// Reads MPD command arguments as MPD does, with its words for what is wrong.
package enum MPDArguments {
    /// A non-negative integer; "Integer expected" or "Number too large" otherwise.
    package static func unsigned(_ text: String) throws(MPDError) -> Int {
        guard let value = Int(text) else { throw MPDError(.argument, "Integer expected: \(text)") }
        guard value >= 0 else { throw MPDError(.argument, "Number too large: \(text)") }
        return value
    }

    /// An integer in `range`; "Integer expected" or "Number too large" otherwise.
    package static func integer(_ text: String, in range: ClosedRange<Int>) throws(MPDError) -> Int {
        guard let value = Int(text) else { throw MPDError(.argument, "Integer expected: \(text)") }
        guard range.contains(value) else { throw MPDError(.argument, "Number too large: \(text)") }
        return value
    }

    /// A number of seconds, with a sign when `relative` is allowed; "Float expected" otherwise.
    package static func seconds(_ text: String) throws(MPDError) -> Double {
        guard let value = Double(text), value.isFinite else { throw MPDError(.argument, "Float expected: \(text)") }
        return value
    }

    /// `0` or `1`; "Boolean (0/1) expected" otherwise.
    package static func boolean(_ text: String) throws(MPDError) -> Bool {
        switch text {
        case "0": return false
        case "1": return true
        default: throw MPDError(.argument, "Boolean (0/1) expected: \(text)")
        }
    }

    /// A position (`N`) or a range of them (`START:END`, END excluded and cut to the queue's end; `START:` to the end),
    /// as positions of a queue of `count` entries; "Bad song index" when it starts beyond the queue.
    package static func range(_ text: String, count: Int) throws(MPDError) -> Range<Int> {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let start = try unsigned(String(parts[0]))
        if parts.count == 1 {
            guard start < count else { throw MPDError(.argument, "Bad song index") }
            return start..<(start + 1)
        }
        let end = parts[1].isEmpty ? count : min(try unsigned(String(parts[1])), count)
        guard start <= end else { throw MPDError(.argument, "Bad song index") }
        return start..<end
    }
}

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

    /// A position (`N`), a range (`START:END`, END excluded; `START:`, to the end) or `-1` (every position), read as
    /// MPD reads them before looking at a queue: nil `end` for an open end. MPD's words for what is wrong: "Integer or
    /// range expected", "Number is negative", "Malformed range" (an end before the start).
    package static func positions(_ text: String) throws(MPDError) -> (start: Int, end: Int?) {
        if text == "-1" { return (0, nil) }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let numbers = parts.map { $0.isEmpty && parts.count == 2 ? nil : Int($0) }
        guard let start = numbers[0], parts.count == 1 || numbers[1] != nil || parts[1].isEmpty else {
            throw MPDError(.argument, "Integer or range expected: \(text)")
        }
        let end = parts.count == 1 ? (start == Int.max ? start : start + 1) : numbers[1]
        guard start >= 0, end ?? 0 >= 0 else { throw MPDError(.argument, "Number is negative: \(text)") }
        if let end, end < start { throw MPDError(.argument, "Malformed range: \(text)") }
        return (start, end)
    }

    /// ``positions(_:)`` as positions of a queue of `count` entries, as MPD's `delete`, `prio` and listings take
    /// them: the end cut to the queue's end (so a range just past it is empty); "Bad song index" when it starts
    /// beyond that.
    package static func range(_ text: String, count: Int) throws(MPDError) -> Range<Int> {
        let (start, end) = try positions(text)
        guard start <= count else { throw MPDError(.argument, "Bad song index") }
        return start..<min(end ?? count, count)
    }

    /// ``positions(_:)`` as songs of a queue of `count` entries that are all there, as MPD's `move` takes them:
    /// "Open-ended range not supported", or "Bad song index" for a range that is empty or goes beyond the queue.
    package static func songs(_ text: String, count: Int) throws(MPDError) -> Range<Int> {
        let (start, end) = try positions(text)
        guard let end else { throw MPDError(.argument, "Open-ended range not supported") }
        guard start < end, end <= count else { throw MPDError(.argument, "Bad song index") }
        return start..<end
    }
}

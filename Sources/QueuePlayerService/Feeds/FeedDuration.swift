import FoundationEssentials

/// The lengths feeds give their episodes in `itunes:duration`: whole seconds (`3600`), or clock time (`59:30`,
/// `1:02:03`), fractions of a second allowed. Pure functions, for any thread.
enum FeedDuration {
    /// The seconds `text` names, or nil when it is no such length (empty, negative, a minute or second field of 60 or
    /// more after the first, or more than three fields).
    static func parse(_ text: String) -> Double? {
        let fields = text.trimmingCharacters(in: .whitespacesAndNewlines).split(
            separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(fields.count) else { return nil }
        var seconds = 0.0
        for (index, field) in fields.enumerated() {
            guard let value = Double(field), value >= 0, value.isFinite else { return nil }
            if index > 0, value >= 60 { return nil }
            seconds = seconds * 60 + value
        }
        return seconds > 0 ? seconds : nil
    }
}

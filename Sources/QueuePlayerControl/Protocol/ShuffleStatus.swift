/// What the standard playerctl's `shuffle` verb sets: on, off, or the other of the two.
package enum ShuffleStatus: String, Codable, Sendable, CaseIterable {
    case on = "On"
    case off = "Off"
    case toggle = "Toggle"

    /// The status named `name`, in any case (`on`, `On`); nil for another word.
    package init?(named name: String) {
        guard let status = Self.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
            return nil
        }
        self = status
    }
}

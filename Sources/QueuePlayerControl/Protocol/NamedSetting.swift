/// A setting whose values have names (`None`, `Track`, `On`…), read in any case, as the standard playerctl reads
/// them.
package protocol NamedSetting: RawRepresentable, CaseIterable where RawValue == String {}

extension NamedSetting {
    /// The value named `name`, in any case; nil for another word.
    package init?(named name: String) {
        guard let value = Self.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
            return nil
        }
        self = value
    }

    /// The value named `name`; an error naming `command`, the word and the values there are for another word.
    package static func named(_ name: String, in command: String) throws(ControlError) -> Self {
        guard let value = Self(named: name) else { throw ControlError("\(command): '\(name)' is not one of \(names)") }
        return value
    }

    /// The values' names, comma-separated.
    package static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

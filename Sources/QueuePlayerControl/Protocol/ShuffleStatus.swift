/// What the standard playerctl's `shuffle` verb sets: on, off, or the other of the two.
package enum ShuffleStatus: String, Codable, Sendable, NamedSetting {
    case on = "On"
    case off = "Off"
    case toggle = "Toggle"
}

/// Which ReplayGain the player applies (`replaygain` on the socket, MPD's `replay_gain_mode`): none, each item's
/// track gain, its album gain, or album gain in order and track gain shuffled (`Auto`).
package enum ReplayGain: String, Codable, Sendable, NamedSetting {
    case off = "Off"
    case track = "Track"
    case album = "Album"
    case auto = "Auto"
}

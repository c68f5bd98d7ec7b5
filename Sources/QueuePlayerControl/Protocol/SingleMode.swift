/// MPD's `single` mode, beside the repeat mode. With repeat on, it is what makes the current item repeat (`loop
/// Track`); with repeat off, the player pauses after the current item, at the next one's start (as mpd pauses at the
/// border between two songs). `once` does the same for one item, then it is off again.
package enum SingleMode: String, Codable, Sendable, NamedSetting {
    case off = "Off"
    case on = "On"
    case once = "Once"
}

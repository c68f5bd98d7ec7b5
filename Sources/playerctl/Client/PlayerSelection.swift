import ArgumentParser
import FoundationEssentials

/// The standard playerctl's player-selection options, for scripts written for it. This daemon is the one player
/// named `queueplayer`; any selection that leaves it out finds no player.
struct PlayerSelection: ParsableArguments {
    @Option(
        name: [.customShort("p"), .long],
        help: ArgumentHelp(
            "Players to control, comma separated: queueplayer or %any select this daemon.",
            valueName: "name"))
    var player: String?

    @Option(
        name: [.customShort("i"), .customLong("ignore-player")],
        help: ArgumentHelp("Players to ignore, comma separated.", valueName: "name"))
    var ignorePlayer: String?

    @Flag(name: [.customShort("a"), .customLong("all-players")], help: "Control every player: this daemon.")
    var allPlayers = false

    @Flag(name: [.customShort("s"), .customLong("no-messages")], help: "Print no diagnostic messages.")
    var noMessages = false

    /// This daemon's name among players, as MPRIS and the standard playerctl show it.
    static let playerName = "queueplayer"

    /// True when the selection includes this daemon: `-p` names it (or `%any`, or one of its instances) or is
    /// absent, and `-i` does not name it.
    var selectsThisDaemon: Bool {
        func names(_ list: String?) -> [String] {
            (list ?? "").split(separator: ",").map(trimmed)
        }
        func isThisDaemon(_ name: String) -> Bool {
            name == Self.playerName || name.hasPrefix(Self.playerName + ".")
        }
        if names(ignorePlayer).contains(where: isThisDaemon) { return false }
        guard !allPlayers, let player else { return true }
        return names(player).contains { $0 == "%any" || isThisDaemon($0) }
    }
}

/// `text` without the white space around it.
private func trimmed(_ text: Substring) -> String {
    guard let first = text.firstIndex(where: { !$0.isWhitespace }),
        let last = text.lastIndex(where: { !$0.isWhitespace })
    else { return "" }
    return String(text[first...last])
}

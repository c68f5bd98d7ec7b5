import ArgumentParser
import FoundationEssentials
import QueuePlayerService

struct MetadataVerb: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metadata",
        abstract: "Print the current item's metadata: all of it, the values of KEYs, or a --format template.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var output: PrintOptions
    @Argument(help: ArgumentHelp("Keys such as xesam:title, or title, artist, album.", valueName: "key"))
    var keys: [String] = []

    /// The player's name in listings, as the standard playerctl shows it.
    static let playerName = PlayerSelection.playerName

    func run() async throws {
        try await output.print(ControlRequest(command: "metadata"), with: options, requiresItem: true) { render($0) }
    }

    /// What to print for `state` without a template, or nil when there is nothing (no item, or none of the keys).
    func render(_ state: PlayerSnapshot) -> String? {
        guard state.current != nil else { return nil }
        let values = Self.values(state)
        if keys.isEmpty {
            return Self.metadataKeys.compactMap { key in
                values[key].map { value in
                    "\(Self.playerName) \(key)\(String(repeating: " ", count: max(1, 26 - key.count)))\(value)"
                }
            }.joined(separator: "\n")
        }
        let found = keys.compactMap { key in values[key] ?? values["xesam:" + key] ?? values["mpris:" + key] }
        return found.isEmpty ? nil : found.joined(separator: "\n")
    }

    static let metadataKeys = [
        "mpris:trackid", "mpris:length", "xesam:title", "xesam:artist", "xesam:album", "xesam:url",
    ]

    /// Every variable a template or key can name.
    static func values(_ state: PlayerSnapshot) -> [String: String] {
        var values = [
            "status": state.status, "position": String(Int64(state.position * 1_000_000)),
            "volume": fixedDecimals(state.volume, places: 6), "playerName": playerName,
        ]
        guard let track = state.current else { return values }
        let url = URL(fileURLWithPath: track.url)
        values["mpris:trackid"] = "/org/mpris/MediaPlayer2/Track/\(track.id)"
        values["mpris:length"] = String(Int64(track.length * 1_000_000))
        values["xesam:title"] = track.title ?? url.lastPathComponent
        values["xesam:url"] = url.absoluteString
        if !track.artists.isEmpty { values["xesam:artist"] = track.artists.joined(separator: ", ") }
        if let album = track.album { values["xesam:album"] = album }
        for key in ["title", "artist", "album"] { values[key] = values["xesam:" + key] }
        return values
    }
}

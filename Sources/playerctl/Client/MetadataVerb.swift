import ArgumentParser
import FoundationEssentials
import QueuePlayerControl

struct MetadataVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metadata",
        abstract: "Print the current item's metadata: all of it, the values of KEYs, or a --format template.")
    @OptionGroup var options: ClientOptions
    @OptionGroup var output: PrintOptions
    @Argument(help: ArgumentHelp("Keys such as xesam:title, or title, artist, album.", valueName: "key"))
    var keys: [String] = []

    /// The player's name in listings, as the standard playerctl shows it.
    static let playerName = PlayerSelection.playerName

    func run() throws {
        try output.print(ControlRequest(.metadata), with: options, requiresItem: true) { render($0) }
    }

    /// What to print for `state` without a template, or nil when there is nothing (no item, or none of the keys).
    /// The listing is the standard playerctl's over MPRIS, line for line: the MPRIS keys in the order the daemon
    /// publishes them, one line per artist.
    func render(_ state: PlayerSnapshot) -> String? {
        guard let track = state.current else { return nil }
        let values = Self.values(state)
        if keys.isEmpty {
            return Self.metadataKeys.flatMap { key -> [String] in
                let shown = key == "xesam:artist" ? track.artists : values[key].map { [$0.text] } ?? []
                return shown.map {
                    "\(Self.playerName) \(key)\(String(repeating: " ", count: max(1, 26 - key.count)))\($0)"
                }
            }.joined(separator: "\n")
        }
        let found = keys.compactMap { key in values[key] ?? values["xesam:" + key] ?? values["mpris:" + key] }
        return found.isEmpty ? nil : found.map(\.text).joined(separator: "\n")
    }

    static let metadataKeys = [
        "mpris:trackid", "mpris:length", "xesam:title", "xesam:url", "xesam:artist", "xesam:album",
        "xesam:contentCreated",
    ]

    /// Every variable a template or key can name, typed as the standard playerctl types them (positions and
    /// lengths in microseconds as integers, the volume as a number, the track id as GLib prints an object path).
    /// Without `metadata`, only the player's properties: what playerctl's `status`, `position` and `volume` see.
    static func values(_ state: PlayerSnapshot, metadata: Bool = true) -> [String: MetadataTemplate.Value] {
        var values: [String: MetadataTemplate.Value] = [
            "status": .string(state.status.rawValue), "position": .integer(Int64(state.position * 1_000_000)),
            "volume": .number(state.volume), "playerName": .string(playerName),
            "playerInstance": .string(playerName),
        ]
        if let waiting = state.waiting { values["waiting"] = .string(waiting) }
        guard metadata, let track = state.current else { return values }
        let url = (track.url.contains("://") ? URL(string: track.url) : nil) ?? URL(fileURLWithPath: track.url)
        values["mpris:trackid"] = .string("'/org/mpris/MediaPlayer2/Track/\(track.id)'")
        values["mpris:length"] = track.length.map { .integer(Int64($0 * 1_000_000)) }
        values["xesam:title"] = .string(track.title ?? url.lastPathComponent)
        values["xesam:url"] = .string(url.absoluteString)
        if !track.artists.isEmpty { values["xesam:artist"] = .string(track.artists.joined(separator: ", ")) }
        if let album = track.album { values["xesam:album"] = .string(album) }
        if let published = track.published { values["xesam:contentCreated"] = .string(published) }
        for key in ["title", "artist", "album"] { values[key] = values["xesam:" + key] }
        return values
    }
}

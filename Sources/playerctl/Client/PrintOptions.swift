import ArgumentParser
import QueuePlayerControl

/// The standard playerctl's output options, accepted before the verb or after it on every verb that prints
/// (`status`, `position`, `volume`, `metadata`, `loop`, `shuffle`).
struct PrintOptions: ParsableArguments {
    @Flag(name: [.customShort("F"), .long], help: "Keep printing as the value changes.")
    var follow = false

    @Option(
        name: [.customShort("f"), .long],
        help: ArgumentHelp(
            "A template such as '{{artist}} - {{title}} {{duration(position)}}'; it may name status, position and "
                + "volume too.", valueName: "template"))
    var format: String?

    /// Prints `text(state)`, or the template rendered with `state`'s variables; with `--follow`, once per change.
    /// `request` is the read that answers once.
    /// `requiresItem` (`metadata`): nothing is printed (exit 1) while there is no current item, template or not,
    /// and templates see the metadata too. A template that cannot be rendered is an error, as in playerctl.
    func print(
        _ request: ControlRequest, with options: ClientOptions, requiresItem: Bool = false,
        _ text: @escaping @Sendable (PlayerSnapshot) -> String?
    ) throws {
        let render: @Sendable (PlayerSnapshot) -> String? = { [format] state in
            if requiresItem, state.current == nil { return nil }
            guard let format else { return text(state) }
            do {
                return try MetadataTemplate(text: format).render(MetadataVerb.values(state, metadata: requiresItem))
            } catch {
                options.fail("Could not execute command: \(error)")
            }
        }
        if follow {
            try options.follow(render)
            return
        }
        let reply = try options.call(request)
        guard let state = reply.state, let line = render(state) else { throw ExitCode(1) }
        Swift.print(line)
    }
}

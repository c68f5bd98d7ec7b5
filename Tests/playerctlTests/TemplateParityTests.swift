import Foundation
import TestSupport
import TestTiers
import Testing

/// The same `--format` template prints the same text from this playerctl and from Debian's (2.4.1, over MPRIS),
/// on the same paused daemon: variables, numbers, strings with commas, operators, every function, and errors.
@Suite("Templates: the same text as Debian's playerctl", .tier(.servers), .serialized)
struct TemplateParityTests {
    static let templates = [
        "{{title}}",
        "{{artist}}",
        "{{album}}",
        "{{position}}",
        "{{volume}}",
        "{{ 1 + 2 }}",
        "{{ 7 / 2 }}",
        "{{ 2 * 3 }}",
        "{{ 5 - 7 }}",
        #"{{ "a" + "b" }}"#,
        #"{{ title + " x" }}"#,
        #"{{ album || "none" }}"#,
        "{{ emoji(status) }}",
        "{{ emoji(volume) }}",
        "{{ trunc(title, 2) }}",
        #"{{ trunc("abcdef", 3) }}"#,
        #"{{ default(xesam:nope, "none, really") }}"#,
        "{{ duration(position) }}",
        "{{ duration(mpris:length) }}",
        "{{ uc(artist) }}",
        #"{{ lc("ÀB") }}"#,
        "{{ 'single' }}",
        "{{ position / 1000000 }}",
        "{{ -3 }}",
        "{{ 1.5 * 2 }}",
        "{{ volume * 100 }}",
        "{{ status }} {{playerName}}",
        #"raw \n text"#,
        "{{ mpris:length }}",
        "{{ nosuchfn(title) }}",
        "{{ title",
        "{{ 1 + }}",
        "{{ trunc(title) }}",
        "{{ position + position }}",
        "{{ mpris:length - position }}",
        "{{ duration(mpris:length - position) }}",
        "{{ duration(3723000000) }}",
        "{{ trunc(title, 10) }}",
        #"{{ markup_escape("<a&b>") }}"#,
        #"{{ default(title, "x") }}"#,
        #"{{ default("", "x") }}"#,
        "{{ uc(position) }}",
        "{{ (1 + 2) * 3 }}",
        "{{ 1 + 2 * 3 }}",
        "{{ }}",
        "a{{ }}b",
        "{{ lc(1) }}",
        "{{ trunc(title, 2.5) }}",
        "{{ 1 / 3 }}",
        "{{ 2 / 0 }}",
        "{{ position * 2 }}",
        "{{ emoji(title) }}",
        #"{{ emoji("Playing") }}"#,
        "{{ volume + 1 }}",
        "{{ duration(volume) }}",
        #"{{ "a, b" }}"#,
        #"{{trunc("héllo wörld",4)}}"#,
        "{{ 100000000000 }}",
        "{{ 0.1 + 0.2 }}",
        "{{ mpris:trackid }}",
        "{{ xesam:url }}",
        "{{ length }}",
        "{{ playerInstance }}",
        "{{artist}} - {{title}} {{duration(position)}}",
        "{{ markup_escape(trunc(title, 40)) }} | {{ lc(status) }}",
        #"{{ default(album, "none") }}"#,
        #"{{ uc(default(xesam:comment, "no comment")) }}"#,
        "{{ ((2)) }}",
        "{{ - - 2 }}",
        "{{ title }}}",
        "{ {title} }",
        #"{{ "unterminated }}"#,
        "{{ trunc(title, -1) }}",
        "{{ trunc(title, 0) }}",
    ]

    @Test("every template prints the same text with the same exit status from both")
    func sameTextFromBoth() async throws {
        let bus = try await SessionBus()
        let socket = privateSocket("templates")
        let daemon = try RunningDaemon(
            [
                "--sink", "null", "--pause", "--socket", socket, "--state-file",
                Subprocess.temporaryFile("sqlite").path, Fixtures.mp3("id3v24-multi").path,
            ], bus: bus)
        #expect(await bus.waitForName("org.mpris.MediaPlayer2.queueplayer"), "\(daemon.log)")
        let states = try await DaemonStates(socket: socket)
        // Paused from the start, so that the position is the same for both, and how fast this test runs cannot move
        // it (the item is 3 s); a volume whose emoji is the middle one.
        #expect(await states.first { $0.status == "Paused" && $0.isOn("id3v24-multi") } != nil, "\(states.history)")
        #expect(await control(socket, "position", "1.5").status == 0)
        #expect(await control(socket, "volume", "0.34").status == 0)
        // Every template on metadata; on the verbs that see only the player's properties, those without a title.
        let propertyTemplates = Self.templates.filter { !$0.contains("title") }.prefix(12)
        for verb in ["metadata", "status", "position", "volume"] {
            for template in verb == "metadata" ? Self.templates[...] : propertyTemplates {
                let standard = await standardPlayerctl(bus, verb, "--format", template)
                let ours = await control(socket, [verb, "--format", template])
                #expect(ours.standardOutput == standard.standardOutput, "\(verb) \(template)")
                #expect(ours.status == standard.status, "\(verb) \(template): \(ours.standardError)")
            }
        }
        let standardListing = await standardPlayerctl(bus, "metadata")
        #expect(await control(socket, "metadata").standardOutput == standardListing.standardOutput)
        #expect(await control(socket, "quit").status == 0)
        #expect(await daemon.exitStatus() == 0)
    }
}

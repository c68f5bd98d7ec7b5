import Foundation
import TestSupport
import TestTiers
import Testing

/// Scripts written for the standard playerctl: its options before or after the verb, player selection, loop and
/// shuffle, templates on every verb that prints.
@Suite("The standard playerctl's options and verbs, on this daemon", .tier(.servers))
struct PlayerOptionsTests {
    @Test("every option and verb answers as the standard playerctl does for a single player named queueplayer")
    func optionsAndVerbs() async throws {
        let socket = privateSocket("options")
        let listedBefore = await control(socket, "-l")
        #expect(listedBefore.status == 0 && listedBefore.standardOutput.isEmpty, "no daemon: -l lists nothing")
        let daemon = try RunningDaemon(
            [
                "--sink", "null", "--pause", "--socket", socket, "--state-file",
                Subprocess.temporaryFile("sqlite").path, Fixtures.mp3("stereo-44k-5s").path,
            ])
        let states = try await DaemonStates(socket: socket)
        // Started paused, the item cannot end while the table runs. Played and then paused, it did once: under load
        // the pause came after its 5 s.
        #expect(await states.first { $0.status == "Paused" && $0.current != nil } != nil, "\(states.history)")
        // (arguments, standard output, exit status); a nil output is not checked.
        let table: [([String], String?, Int32)] = [
            (["-l"], "queueplayer\n", 0),
            (["--list-all"], "queueplayer\n", 0),
            (["-p", "queueplayer", "status"], "Paused\n", 0),
            (["status", "--player", "queueplayer"], "Paused\n", 0),
            (["-p", "vlc,queueplayer", "status"], "Paused\n", 0),
            (["-p", "%any", "status"], "Paused\n", 0),
            (["-a", "status"], "Paused\n", 0),
            (["-p", "vlc", "status"], "", 1),
            (["-i", "queueplayer", "status"], "", 1),
            (["-i", "vlc", "status"], "Paused\n", 0),
            (["-p", "vlc", "-l"], "", 0),
            // As Debian's: status, position and volume templates see the player's properties, not the metadata.
            (["-f", "{{status}} {{title}}", "status"], "Paused \n", 0),
            (["-f", "{{status}} {{title}}", "metadata"], "Paused stereo-44k-5s.mp3\n", 0),
            (["metadata", "-f", "{{uc(title)}}"], "STEREO-44K-5S.MP3\n", 0),
            (["-f", "{{volume}}", "volume"], "1.0\n", 0),
            (["volume"], "1.000000\n", 0),
            (["loop"], "None\n", 0),
            (["loop", "Track"], "", 0),
            (["loop"], "Track\n", 0),
            (["-f", "{{status}}", "loop"], "Paused\n", 0),
            (["loop", "playlist"], "", 0),
            (["loop"], "Playlist\n", 0),
            (["loop", "Sometimes"], "", 1),
            (["loop", "None"], "", 0),
            (["shuffle"], "Off\n", 0),
            (["shuffle", "Toggle"], "", 0),
            (["shuffle"], "On\n", 0),
            (["shuffle", "off"], "", 0),
            (["shuffle"], "Off\n", 0),
            (["shuffle", "Maybe"], "", 1),
            (["-v"], "v0.3.0\n", 0),
            (["--version"], "v0.3.0\n", 0),
        ]
        for (arguments, output, status) in table {
            let result = await control(socket, arguments)
            #expect(result.status == status, "\(arguments): \(result.standardError)")
            if let output { #expect(result.standardOutput == output, "\(arguments)") }
        }
        let refused = await control(socket, ["-p", "vlc", "status"])
        #expect(refused.standardError.contains("No players found"))
        let silent = await control(socket, ["-s", "-p", "vlc", "status"])
        #expect(silent.status == 1 && silent.standardError.isEmpty, "-s prints no message: \(silent.standardError)")
        let loop = await control(socket, ["loop", "Sometimes"])
        #expect(loop.standardError.contains("'Sometimes' is not one of None, Track, Playlist"), "\(loop.standardError)")
        let shuffle = await control(socket, ["shuffle", "Maybe"])
        #expect(shuffle.standardError.contains("'Maybe' is not one of On, Off, Toggle"), "\(shuffle.standardError)")
        let gain = await control(socket, ["replaygain", "loud"])
        #expect(gain.standardError.contains("'loud' is not one of Off, Track, Album, Auto"), "\(gain.standardError)")
        #expect(await control(socket, "replaygain", "album").status == 0)
        #expect(await control(socket, "replaygain").standardOutput == "Album\n")
        #expect(await control(socket, "quit").status == 0)
        #expect(await daemon.exitStatus() == 0)
    }

    @Test("run as queueplayerctl (the Debian package's name), the client completes and documents that name")
    func namedAsRun() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("queueplayerctl-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let renamed = folder.appendingPathComponent("queueplayerctl")
        try FileManager.default.createSymbolicLink(at: renamed, withDestinationURL: Fixtures.playerctl)
        let completion = await Subprocess.run(renamed.path, ["--generate-completion-script", "bash"])
        let registrations = completion.standardOutput.split(separator: "\n").filter { $0.hasPrefix("complete ") }
        // Debian's playerctl keeps its own completion: this script registers one for queueplayerctl alone.
        #expect(registrations.count == 1 && registrations[0].hasSuffix(" queueplayerctl"), "\(registrations)")
        let help = await Subprocess.run(renamed.path, ["--help"])
        #expect(help.standardOutput.contains("USAGE: queueplayerctl "), "\(help.standardOutput)")
        #expect(help.standardOutput.contains("Run `queueplayerctl daemon ITEM...`"), "\(help.standardOutput)")
    }

    @Test("the bash completion script (what the Debian package installs) completes verbs and options")
    func bashCompletion() async {
        let cases = [("playerctl lo", "loop"), ("playerctl sh", "shuffle"), ("playerctl status --pl", "--player")]
        for (line, expected) in cases {
            let words = line.split(separator: " ").map { "'\($0)'" }.joined(separator: " ")
            let script = """
                source <('\(Fixtures.playerctl.path)' --generate-completion-script bash)
                COMP_WORDS=(\(words)); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}
                _playerctl playerctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
                printf '%s\\n' "${COMPREPLY[@]}"
                """
            let result = await Subprocess.run("/bin/bash", ["-c", script])
            let completions = result.standardOutput.split(separator: "\n")
            #expect(completions.contains(Substring(expected)), "\(line): \(result)")
        }
    }
}

import Foundation

/// Debian's `mpd` (0.23), private to a test: on a free port of 127.0.0.1, a `null` output with a software mixer, the
/// music folder given, its database scanned before the initializer returns, and a sticker database. The reference the daemon's MPD answers
/// are compared with. Stopped when released.
///
/// Starting never skips: if mpd does not come up or cannot scan, the initializer throws and the test fails.
public final class MPDReferenceServer: Sendable {
    public let port: Int
    private let server: ServerProcess
    private let folder: String

    /// Starts mpd on `musicFolder` and waits until it has scanned it (`mpc update --wait`).
    public init(musicFolder: String) async throws {
        folder = Scratch.uniquePath("mpd")
        try FileManager.default.createDirectory(atPath: "\(folder)/playlists", withIntermediateDirectories: true)
        port = try LoopbackPort.free()
        let configuration = """
            music_directory "\(musicFolder)"
            playlist_directory "\(folder)/playlists"
            db_file "\(folder)/database"
            sticker_file "\(folder)/sticker.sql"
            log_file "\(folder)/log"
            bind_to_address "127.0.0.1"
            port "\(port)"
            audio_output {
              type "null"
              name "null"
              mixer_type "software"
            }
            """
        try configuration.write(toFile: "\(folder)/mpd.conf", atomically: true, encoding: .utf8)
        server = ServerProcess(
            "/usr/bin/mpd", ["--no-daemon", "\(folder)/mpd.conf"], readyPort: port, log: "\(folder)/log")
        try await server.start()
        let scan = await Subprocess.run("/usr/bin/mpc", ["--port", "\(port)", "update", "--wait"])
        guard scan.status == 0 else {
            throw Subprocess.LaunchError(description: "mpd did not scan \(musicFolder): \(scan.standardError)")
        }
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// Sends MPD protocol lines to a server one at a time, as a client does, and returns each answer (a command list's
/// lines answered together, as the `command_list_end` line's answer; the lines inside it, empty).
public enum MPDSessionReplay {
    public static func answers(port: Int, lines: [String]) async -> [String] {
        let script = """
            import json, socket, sys
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            f = s.makefile("rwb")
            f.readline()
            answers, listing = [], False
            for line in sys.argv[2:]:
                f.write((line + "\\n").encode()); f.flush()
                if line in ("command_list_begin", "command_list_ok_begin"):
                    listing = True
                if listing and line != "command_list_end":
                    answers.append("")
                    continue
                listing, text = False, ""
                while True:
                    answer = f.readline().decode()
                    text += answer
                    if not answer or answer.startswith("OK") or answer.startswith("ACK"):
                        break
                answers.append(text)
            print(json.dumps(answers))
            """
        let result = await Subprocess.run("/usr/bin/python3", ["-c", script, "\(port)"] + lines)
        let decoded = try? JSONDecoder().decode([String].self, from: Data(result.standardOutput.utf8))
        return decoded ?? ["the replay failed (\(result.status)): \(result.standardError)"]
    }
}

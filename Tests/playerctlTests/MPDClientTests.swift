import Foundation
import TestSupport
import TestTiers
import Testing

/// Debian's MPD clients drive the daemon over MPD's protocol: `mpc`, `ncmpcpp` and python-mpd2 (`python3-mpd`), as
/// Home Assistant's integration and Music Assistant's MPD player use it. What they change, the control socket sees:
/// one player, whichever front end.
@Suite("MPD clients drive the daemon: mpc and python-mpd2", .tier(.servers))
struct MPDClientTests {
    /// Imports python-mpd2's asyncio client and defines `commands_client()`: one for commands, whose keep-alive
    /// `idle` does not start while a test runs. In Debian 12's python3-mpd (3.0.5) a command issued just as that idle
    /// starts (0.1 s after the last answer) is written before it; the client reads the command's answer as the idle's
    /// and waits forever for the command's (python-mpd2 issue 173, fixed in 3.1.0, the version Home Assistant and
    /// Music Assistant install). A client kept in `idle` issues no command, and keeps the 0.1 s.
    static let asyncioClient = """
        from mpd.asyncio import MPDClient
        def commands_client():
            client = MPDClient()
            client.IMMEDIATE_COMMAND_TIMEOUT = 3600
            return client
        """

    /// A daemon on the null sink, started paused with nothing queued, serving MPD's protocol on a free port and a
    /// Unix socket, with the fixtures as its music folder.
    private struct Daemon {
        let process: RunningDaemon
        let socket: String
        let port: Int
        let mpdSocket: String

        init(_ name: String, options: [String] = []) async throws {
            socket = privateSocket(name)
            port = try LoopbackPort.free()
            mpdSocket = socket + ".mpd"
            process = try RunningDaemon(
                [
                    "--sink", "null", "--pause", "--socket", socket, "--state-file",
                    Subprocess.temporaryFile("sqlite").path,
                    "--mpd", "127.0.0.1:\(port)", "--mpd", mpdSocket,
                    "--music-directory", Fixtures.mp3("stereo-44k-5s").deletingLastPathComponent().path,
                    "--playlist-directory", Subprocess.temporaryFile("playlists").path + ".d",
                ] + options)
            // The MPD addresses are bound before the control socket answers: its first state says they are.
            let served = try await DaemonStates(socket: socket).first { _ in true }
            #expect(served != nil, "the daemon did not answer on its control socket: \(process.log)")
        }

        func mpc(_ arguments: String...) async -> Subprocess.Result {
            await Subprocess.run("/usr/bin/mpc", ["--host", "127.0.0.1", "--port", "\(port)"] + arguments)
        }

        func quit() async {
            #expect(await control(socket, "quit").status == 0)
            #expect(await process.exitStatus() == 0, "\(process.log)")
        }
    }

    @Test("mpc queues, plays, pauses, sets the volume, skips, clears, shuffles, moves; the socket sees each change")
    func mpc() async throws {
        let daemon = try await Daemon("mpd-mpc")
        // A first song of a minute: at the start of the parallel phase a 5 s one ended between `play` and `pause`,
        // and `next` then left the queue empty.
        let added = await daemon.mpc("add", "long-8k-60s.mp3", "sweep-44k-4s.mp3")
        #expect(added.status == 0, "\(added.standardError)")
        let listed = await daemon.mpc("-f", "%file%", "playlist")
        #expect(listed.standardOutput == "long-8k-60s.mp3\nsweep-44k-4s.mp3\n", "\(listed.standardError)")
        #expect(await daemon.mpc("play").status == 0)
        #expect(await control(daemon.socket, "status").standardOutput == "Playing\n")
        #expect(await daemon.mpc("pause").status == 0)
        #expect(await control(daemon.socket, "status").standardOutput == "Paused\n")
        #expect(await daemon.mpc("volume", "40").status == 0)
        #expect(await control(daemon.socket, "volume").standardOutput == "0.400000\n")
        #expect(await daemon.mpc("next").status == 0)
        let current = await daemon.mpc("-f", "%file%", "current")
        #expect(current.standardOutput == "sweep-44k-4s.mp3\n")
        let status = await daemon.mpc("status")
        #expect(status.standardOutput.contains("volume: 40%"), "\(status.standardOutput)")
        // Refused as MPD refuses them, and nothing queued.
        let outside = await daemon.mpc("add", "/etc/hostname")
        #expect(outside.status != 0 && outside.standardError.contains("Access denied"), "\(outside.standardError)")
        let escape = await daemon.mpc("add", "../../Package.swift")
        #expect(escape.status != 0 && escape.standardError.contains("Malformed URI"), "\(escape.standardError)")
        #expect(await daemon.mpc("save", "evening").status == 0)
        #expect(await daemon.mpc("clear").status == 0)
        #expect(await daemon.mpc("playlist").standardOutput.isEmpty)
        let stored = await daemon.mpc("lsplaylists")
        #expect(stored.standardOutput == "evening\n", "\(stored.standardError)")
        #expect(await daemon.mpc("load", "evening").status == 0)
        #expect(await daemon.mpc("-f", "%file%", "playlist").standardOutput == "sweep-44k-4s.mp3\n")
        #expect(await daemon.mpc("add", "join-1.mp3", "join-2.mp3", "join-3.mp3").status == 0)
        #expect(await daemon.mpc("shuffle").status == 0)
        let shuffled = await daemon.mpc("-f", "%file%", "playlist").standardOutput.split(separator: "\n")
        #expect(Set(shuffled) == ["sweep-44k-4s.mp3", "join-1.mp3", "join-2.mp3", "join-3.mp3"] && shuffled.count == 4)
        #expect(await daemon.mpc("move", "2", "4").status == 0)
        let moved = await daemon.mpc("-f", "%file%", "playlist").standardOutput.split(separator: "\n")
        #expect(moved == [shuffled[0], shuffled[2], shuffled[3], shuffled[1]], "\(shuffled) became \(moved)")
        await daemon.quit()
    }

    @Test("mpc browses the music index (update, ls, find, search, list, stats, findadd), searches the queue, rates")
    func mpcBrowses() async throws {
        let daemon = try await Daemon("mpd-browse")
        // The daemon indexes its folder as it starts; mpc waits for the end of another update (idle update).
        let update = await daemon.mpc("update", "--wait")
        #expect(update.status == 0, "\(update.standardError)")
        #expect(await daemon.mpc("ls").standardOutput.contains("tagged-v24.mp3\n"))
        let found = await daemon.mpc("-f", "%file% %title%", "find", "album", "Mornings")
        #expect(found.standardOutput == "tagged-v23.mp3 Second Light\ntagged-v24.mp3 First Light\n", "\(found)")
        #expect(await daemon.mpc("search", "composer", "WIECK").standardOutput == "tagged-v24.mp3\n")
        let albums = await daemon.mpc("list", "album", "genre", "Rock")
        #expect(albums.standardOutput == "Mornings\nOld Album\n", "\(albums)")
        let stats = await daemon.mpc("stats")
        #expect(stats.standardOutput.contains("Albums:") && stats.standardOutput.contains("Songs:"), "\(stats)")
        #expect(await daemon.mpc("findadd", "title", "Second Light").status == 0)
        let queued = await daemon.mpc("-f", "%artist% - %title% - %track%", "playlist")
        #expect(queued.standardOutput == "Bo Li 李 - Second Light - 2\n", "\(queued)")
        // searchplay searches the queue (playlistsearch) and plays the first song found. The song lasts 2.8 s, which
        // a busy machine can let pass before the next mpc runs: repeated alone, it stays current.
        #expect(await daemon.mpc("findadd", "title", "First Light").status == 0)
        #expect(await daemon.mpc("repeat", "on").status == 0)
        #expect(await daemon.mpc("single", "on").status == 0)
        let searched = await daemon.mpc("searchplay", "title", "FIRST")
        #expect(searched.status == 0, "\(searched.standardError)")
        #expect(await daemon.mpc("-f", "%title%", "current").standardOutput == "First Light\n")
        #expect(await daemon.mpc("sticker", "tagged-v24.mp3", "set", "rating", "5").status == 0)
        #expect(await daemon.mpc("sticker", "tagged-v24.mp3", "get", "rating").standardOutput == "rating=5\n")
        let rated = await daemon.mpc("sticker", "", "find", "rating")
        #expect(rated.standardOutput == "tagged-v24.mp3: rating=5\n", "\(rated)")
        await daemon.quit()
    }

    @Test("ncmpcpp in tmux: it shows the queue with its tags, plays the song chosen, browses and adds another")
    func ncmpcpp() async throws {
        let daemon = try await Daemon("mpd-ncmpcpp")
        #expect(await daemon.mpc("update", "--wait").status == 0)
        #expect(await daemon.mpc("add", "tagged-v24.mp3", "tagged-v23.mp3").status == 0)
        let folder = Scratch.newFolder("ncmpcpp")
        let tmux = ["-S", "\(folder)/tmux.socket"]
        // ncmpcpp runs its hook as it first learns the player's state: then it reads keys (those sent before are lost).
        let configuration = """
            mpd_host = "127.0.0.1"
            mpd_port = "\(daemon.port)"
            ncmpcpp_directory = "\(folder)/home"
            startup_screen = "playlist"
            execute_on_player_state_change = "tmux \(tmux.joined(separator: " ")) wait-for -S state"
            """
        try configuration.write(toFile: "\(folder)/config", atomically: true, encoding: .utf8)
        let command = "ncmpcpp --config \(folder)/config --quiet; tmux \(tmux.joined(separator: " ")) wait-for -S ended"
        // The tmux server it starts lives on: it is given no descriptor of this process but its standard ones, or
        // this process would wait for the server's end to see the client's, and no blocked signal (this process
        // blocks most, and a server that inherits them never sees its panes end nor kill-server done). The pane
        // remains after ncmpcpp quits, so that the server is still there for the wait on `ended`, however late.
        let session =
            tmux + [
                "new-session", "-d", "-x", "160", "-y", "40", command, ";", "set-option", "remain-on-exit", "on", ";",
                "pipe-pane", "-o",
            ]
        let started = await Subprocess.run(
            "/usr/bin/python3",
            [
                "-c",
                "import os, signal, sys; os.closerange(3, 65536); signal.pthread_sigmask(signal.SIG_SETMASK, []); "
                    + "os.execv(sys.argv[1], sys.argv[1:])", "/usr/bin/tmux",
            ]
                + session + ["cat > \(folder)/screen"])
        #expect(started.status == 0, "\(started.standardError)")
        defer { _ = Subprocess.runBlocking("/usr/bin/tmux", tmux + ["kill-server"]) }
        let keys = { (keys: [String]) in await Subprocess.run("/usr/bin/tmux", tmux + ["send-keys"] + keys) }
        let wait = { (channel: String) in
            await Subprocess.run("/usr/bin/timeout", ["30", "/usr/bin/tmux"] + tmux + ["wait-for", channel])
        }
        #expect(await wait("state").status == 0, "ncmpcpp did not start")

        let states = try await DaemonStates(socket: daemon.socket)
        _ = await keys(["Enter"])
        let playing = await states.first { $0.status == "Playing" && $0.isOn("tagged-v24") }
        #expect(playing != nil, "Enter on the first song plays it: \(states.history)")
        // The browser (2), a search for a song (/), Enter: it is added and plays.
        _ = await keys(["2"])
        _ = await keys(["/", "sweep-44k", "Enter"])
        _ = await keys(["Enter"])
        let added = await states.first { $0.status == "Playing" && $0.isOn("sweep-44k-4s") }
        #expect(added != nil, "a song chosen in the browser plays: \(states.history)")
        _ = await keys(["q"])
        #expect(await wait("ended").status == 0, "ncmpcpp did not quit")
        let screen = (try? String(contentsOfFile: "\(folder)/screen", encoding: .utf8)) ?? ""
        for shown in ["First Light", "Second Light", "Mornings", "Ana Ñúñez"] {
            #expect(screen.contains(shown), "the playlist screen shows \(shown)")
        }
        await daemon.quit()
    }

    @Test("python-mpd2: an idling client hears another's change and message, lists run whole, errors are MPD's")
    func pythonMPD() async throws {
        let daemon = try await Daemon("mpd-python")
        let script = """
            import json, sys, threading
            from mpd import MPDClient, CommandError
            def client(address):
                c = MPDClient()
                c.connect(*address)
                return c
            tcp, local = ("127.0.0.1", int(sys.argv[1])), (sys.argv[2], None)
            idler, actor = client(tcp), client(local)
            out = {"version": idler.mpd_version}
            waiting = threading.Thread(target=lambda: out.update(idle1=idler.idle("mixer", "playlist")))
            waiting.start()
            actor.setvol(30)
            waiting.join()
            out["added"] = actor.addid(sys.argv[3])
            out["idle2"] = idler.idle("playlist")
            actor.command_list_ok_begin()
            actor.status()
            actor.playlistinfo()
            status, songs = actor.command_list_end()
            out["status"] = {k: status[k] for k in ("volume", "playlistlength", "consume", "state")}
            out["files"] = [s["file"] for s in songs]
            try:
                actor.play(99)
            except CommandError as error:
                out["error"] = str(error)
            idler.subscribe("queueplayer:test")
            waiting = threading.Thread(target=lambda: out.update(idle3=idler.idle("message")))
            waiting.start()
            out["channels"] = actor.channels()
            actor.sendmessage("queueplayer:test", "hello there")
            waiting.join()
            out["messages"] = idler.readmessages()
            print(json.dumps(out))
            """
        let result = await Subprocess.run(
            "/usr/bin/python3",
            ["-c", script, "\(daemon.port)", daemon.mpdSocket, Fixtures.mp3("sweep-44k-4s").path])
        #expect(result.status == 0, "\(result.standardError)")
        let out = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any] ?? [:]
        #expect(out["version"] as? String == "0.23.5")
        #expect(out["idle1"] as? [String] == ["mixer"])
        #expect(out["idle2"] as? [String] == ["playlist"])
        #expect(
            out["status"] as? [String: String]
                == ["volume": "30", "playlistlength": "1", "consume": "1", "state": "pause"], "\(out)")
        #expect(out["files"] as? [String] == ["sweep-44k-4s.mp3"], "a file in the music folder is named in it")
        #expect(out["error"] as? String == "[2@0] {play} Bad song index")
        #expect(out["idle3"] as? [String] == ["message"] && out["channels"] as? [String] == ["queueplayer:test"])
        #expect(out["messages"] as? [[String: String]] == [["channel": "queueplayer:test", "message": "hello there"]])
        await daemon.quit()
    }

    @Test("a local client reads the music folder with config, a TCP one may not; kill ends the daemon as quit does")
    func configAndKill() async throws {
        let daemon = try await Daemon("mpd-kill")
        let script = """
            import json, sys
            from mpd import MPDClient, CommandError
            local, tcp = MPDClient(), MPDClient()
            local.connect(sys.argv[2])
            tcp.connect("127.0.0.1", int(sys.argv[1]))
            out = {"config": local.config()}
            try:
                tcp.config()
            except CommandError as error:
                out["tcp"] = str(error)
            try:
                local.kill()
            except Exception:
                pass
            print(json.dumps(out))
            """
        let result = await Subprocess.run("/usr/bin/python3", ["-c", script, "\(daemon.port)", daemon.mpdSocket])
        #expect(result.status == 0, "\(result.standardError)")
        let out = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any] ?? [:]
        #expect(out["config"] as? String == Fixtures.mp3("stereo-44k-5s").deletingLastPathComponent().path)
        #expect(out["tcp"] as? String == "[4@0] {config} Command only permitted to local clients")
        #expect(await daemon.process.exitStatus() == 0, "\(daemon.process.log)")
    }

    @Test("Home Assistant's calls, made as its mpd integration makes them through python-mpd2's asyncio client")
    func homeAssistant() async throws {
        let daemon = try await Daemon("mpd-home-assistant")
        // The calls of homeassistant/components/mpd/media_player.py: the update (commands once, then status,
        // currentsong and listplaylists), play_media of a file and of a playlist (its "source"), volume, pause,
        // seek, stop, its three repeat settings (set_repeat: all, one, off), and shuffle on and off.
        let script = """
            import asyncio, json, sys
            \(Self.asyncioClient)
            async def main():
                client = commands_client()
                client.timeout, client.idletimeout = 30, None
                await client.connect("127.0.0.1", int(sys.argv[1]))
                out = {"albumart": "albumart" in list(await client.commands())}
                status, song = await client.status(), await client.currentsong()
                out["idle"] = [status["state"], status.get("volume"), song.get("file", "")]
                out["sources"] = [p["playlist"] for p in await client.listplaylists()]
                await client.clear()
                await client.add(sys.argv[2])
                await client.play()
                status, song = await client.status(), await client.currentsong()
                out["playing"] = [status["state"], song.get("file"), status["time"].split(":")[1]]
                picture = await client.readpicture("tagged-v24.mp3")
                out["picture"] = f'{picture.get("type")} {len(picture.get("binary", b""))}'
                await client.setvol(25)
                await client.pause(1)
                await client.seekcur(2)
                status = await client.status()
                out["paused"] = [status["state"], status["volume"], status["elapsed"]]
                await client.save("evening")
                await client.clear()
                await client.load("evening")
                await client.play()
                status = await client.status()
                out["source"] = [status["state"], status["playlistlength"]]
                await client.stop()
                out["stopped"] = (await client.status())["state"]
                modes = []
                for repeat, single in [(1, 0), (1, 1), (0, 0)]:
                    await client.repeat(repeat)
                    await client.single(single)
                    status = await client.status()
                    modes.append(status["repeat"] + status["single"])
                out["repeat"] = modes
                shuffles = []
                for random in [1, 0]:
                    await client.random(random)
                    shuffles.append((await client.status())["random"])
                out["random"] = shuffles
                print(json.dumps(out))
            asyncio.run(asyncio.wait_for(main(), 30))
            """
        let result = await Subprocess.run("/usr/bin/python3", ["-c", script, "\(daemon.port)", "long-8k-60s.mp3"])
        #expect(result.status == 0, "\(result.standardError)")
        let out = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any] ?? [:]
        #expect(out["albumart"] as? Bool == true, "listed, so Home Assistant asks for pictures")
        #expect(out["picture"] as? String == "image/png 20000", "the tag's cover, every chunk: \(out)")
        #expect(out["idle"] as? [String] == ["stop", "100", ""], "an empty queue is stopped, as mpd's: \(out)")
        #expect(out["sources"] as? [String] == [])
        #expect(out["playing"] as? [String] == ["play", "long-8k-60s.mp3", "60"], "\(out)")
        #expect(out["paused"] as? [String] == ["pause", "25", "2.000"], "\(out)")
        #expect(out["source"] as? [String] == ["play", "1"], "\(out)")
        #expect(out["stopped"] as? String == "stop")
        #expect(out["repeat"] as? [String] == ["10", "11", "00"], "\(out)")
        #expect(out["random"] as? [String] == ["1", "0"], "\(out)")
        await daemon.quit()
    }

    @Test("Music Assistant's calls, made as its MPD player makes them: a command connection, an idling one, a stream")
    func musicAssistant() async throws {
        // Music Assistant streams its queue to the player as one HTTP stream without a length, which does not end
        // while the test runs: its minute at once, then the connection held open (an ended one is reconnected, and
        // status would rightly say so).
        var flow = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("long-8k-60s"))))
        flow.isLive = true
        flow.stallsAfterBytes = flow.body.count
        let web = try await HTTPTestServer(routes: ["/flow/queue.mp3": flow])
        let daemon = try await Daemon("mpd-music-assistant")
        // The calls of music_assistant/providers/mpd/player.py: two connections (commands, and one kept in idle),
        // status on connecting and after each change, play_media (clear, add its stream's URL, play 0), pause 1,
        // pause 0 (its play), setvol, seekcur, stop. Each state is read once the idling connection is told of it
        // (Music Assistant's own idle loop compares each list python-mpd2 yields with a name, so it never matches and
        // Music Assistant learns of changes from its 5 s status poll).
        let script = """
            import asyncio, json, sys
            from mpd import CommandError
            \(Self.asyncioClient)
            async def main():
                client, idler = commands_client(), MPDClient()
                for connection in (client, idler):
                    await connection.connect("127.0.0.1", int(sys.argv[1]))
                status = await client.status()
                out = {"version": client.mpd_version, "connected": [status["state"], status.get("volume", "-1")]}
                told = asyncio.Queue()
                async def idle_loop():
                    async for subsystems in idler.idle():
                        for subsystem in subsystems:
                            told.put_nowait(subsystem)
                idling = asyncio.create_task(idle_loop())
                async def told_of(subsystem, state=None):
                    while True:
                        while await told.get() != subsystem:
                            pass
                        status = await client.status()
                        if state is None or status["state"] == state:
                            return status
                await client.clear()
                await client.add(sys.argv[2])
                await client.play(0)
                status = await told_of("player", "play")
                song = await client.currentsong()
                out["playing"] = [song.get("file"), str("duration" in status), str("error" in status)]
                await client.pause(1)
                out["paused"] = (await told_of("player", "pause"))["state"]
                await client.pause(0)
                out["resumed"] = (await told_of("player", "play"))["state"]
                await client.setvol(40)
                out["volume"] = (await told_of("mixer"))["volume"]
                try:
                    await client.seekcur(10)
                    out["seek"] = "accepted"
                except CommandError as error:
                    out["seek"] = str(error)
                await client.stop()
                status = await told_of("player", "stop")
                out["stopped"] = [status["state"], str("elapsed" in status)]
                idling.cancel()
                print(json.dumps(out))
            asyncio.run(asyncio.wait_for(main(), 30))
            """
        let url = web.url("/flow/queue.mp3").absoluteString
        let result = await Subprocess.run("/usr/bin/python3", ["-c", script, "\(daemon.port)", url])
        #expect(result.status == 0, "\(result.standardError)")
        let out = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any] ?? [:]
        #expect(out["connected"] as? [String] == ["stop", "100"], "\(out)")
        #expect((out["version"] as? String)?.hasPrefix("0.2") == true, "\(out)")
        #expect(out["playing"] as? [String] == [url, "False", "False"], "a stream has no duration: \(out)")
        #expect(out["paused"] as? String == "pause" && out["resumed"] as? String == "play", "\(out)")
        #expect(out["volume"] as? String == "40", "\(out)")
        let seek = out["seek"] as? String ?? ""
        #expect(seek.hasPrefix("[52@0] {seekcur} ") && seek.contains("cannot be sought in"), "named: \(out)")
        #expect(out["stopped"] as? [String] == ["stop", "False"], "\(out)")
        await daemon.quit()
        try await web.stop()
    }

    @Test("with a password, a client that gives none may only read; the password lets it play")
    func password() async throws {
        let passwords = Subprocess.temporaryFile("passwords")
        try "# the household's\ns3cret@read,add,control\n".write(to: passwords, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: passwords) }
        let daemon = try await Daemon(
            "mpd-password",
            options: [
                "--mpd-password-file", passwords.path, "--mpd-password", "guest@read", "--mpd-default-permissions",
                "read",
            ])
        let script = """
            import json, sys
            from mpd import MPDClient, CommandError
            client = MPDClient()
            client.connect("127.0.0.1", int(sys.argv[1]))
            out = {"state": client.status()["state"]}
            try:
                client.add("stereo-44k-5s.mp3")
            except CommandError as error:
                out["refused"] = str(error)
            try:
                client.password("wrong")
            except CommandError as error:
                out["wrong"] = str(error)
            client.password("s3cret")
            client.add("stereo-44k-5s.mp3")
            client.play()
            out["after"] = client.status()["state"]
            print(json.dumps(out))
            """
        let result = await Subprocess.run("/usr/bin/python3", ["-c", script, "\(daemon.port)"])
        #expect(result.status == 0, "\(result.standardError)")
        let out = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: String] ?? [:]
        #expect(
            out == [
                "state": "stop", "refused": #"[4@0] {add} you don't have permission for "add""#,
                "wrong": "[3@0] {password} incorrect password", "after": "play",
            ], "\(out)")
        await daemon.quit()
    }
}

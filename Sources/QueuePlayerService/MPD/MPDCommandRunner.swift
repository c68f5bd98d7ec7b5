import FoundationEssentials
import QueuePlayer
import QueuePlayerControl

/// Carries out MPD commands for one connection through the ``PlayerController``, as every other front end's
/// commands are carried out (one path, one at a time), and writes MPD's answers.
///
/// Threading: any thread; a connection runs its commands one at a time, off its event loop (`add` checks files).
package struct MPDCommandRunner: Sendable {
    /// What carrying out a batch came to: the bytes to write, and whether the connection closes after it.
    package struct Outcome: Equatable, Sendable {
        /// The answers: text, with the binary chunks of `albumart` and `readpicture` where they come.
        package var bytes: [UInt8]
        package var closes: Bool

        /// The answers as text, a binary chunk decoded as UTF-8 (what tests compare).
        package var text: String { String(decoding: bytes, as: UTF8.self) }
    }

    let controller: PlayerController
    let musicFolder: MPDMusicFolder
    let playlists: MPDStoredPlaylists
    let versions: MPDQueueVersions
    /// Where changes that are not the player's (stored playlists) are told to idling clients.
    let feed: MPDChangeFeed
    /// The passwords and what they allow.
    let access: MPDAccess
    /// What this connection may do now.
    let permissions: MPDClientPermissions
    /// The client is on a Unix socket: the same user, who may name files outside the music folder.
    let isLocalClient: Bool
    /// The tags this connection asked for.
    let tags = MPDTags()
    /// The binary chunk a command leaves to be sent after its text, and the most a chunk may hold.
    let binary = MPDBinaryChunk()
    /// The music folder's index: MPD's database (nil: none, and the commands that need one say so).
    let index: MusicIndex?
    /// The daemon's time up and playing.
    let playTime: MPDPlayTime
    /// This client's channels and the messages sent to them.
    let mailbox: MPDMessages.Mailbox

    /// A runner for one connection; without `mailbox`, its messages go to no other client.
    package init(
        controller: PlayerController, musicFolder: MPDMusicFolder, playlists: MPDStoredPlaylists,
        versions: MPDQueueVersions, feed: MPDChangeFeed, index: MusicIndex? = nil,
        playTime: MPDPlayTime = MPDPlayTime(), access: MPDAccess = .open, mailbox: MPDMessages.Mailbox? = nil,
        isLocalClient: Bool
    ) {
        self.mailbox = mailbox ?? MPDMessages(feed: feed).mailbox()
        self.index = index
        self.playTime = playTime
        self.access = access
        permissions = MPDClientPermissions(access.defaultPermissions)
        self.controller = controller
        self.musicFolder = musicFolder
        self.playlists = playlists
        self.versions = versions
        self.feed = feed
        self.isLocalClient = isLocalClient
    }

    /// Carries out `lines` in order, as ``MPDSession/Step/execute(lines:isList:listOK:)`` asks: each answered
    /// `list_OK` when `listOK`; an error ends the batch with its `ACK` (numbered by its place in a list); else `OK`.
    package func run(lines: [String], listOK: Bool) -> Outcome {
        var bytes: [UInt8] = []
        for (index, line) in lines.enumerated() {
            do throws(MPDError) {
                let request = try MPDRequest.parse(line[...])
                guard let command = Self.commands[request.name] else {
                    throw MPDError(.unknown, "unknown command \"\(request.name)\"")
                }
                do throws(MPDError) {
                    guard permissions.current.isSuperset(of: command.permission) else {
                        throw MPDError(.permission, "you don't have permission for \"\(request.name)\"")
                    }
                    guard command.arguments.contains(request.arguments.count) else {
                        throw MPDError(.argument, Self.arityMessage(command.arguments, request))
                    }
                    guard let answer = try command.run(self, request.arguments) else {
                        return Outcome(bytes: bytes, closes: true)
                    }
                    bytes += answer.utf8
                    if let chunk = binary.take() {
                        bytes += "binary: \(chunk.count)\n".utf8
                        bytes += chunk
                        bytes += "\n".utf8
                    }
                } catch {
                    var error = error
                    error.command = request.name
                    throw error
                }
                if listOK { bytes += "list_OK\n".utf8 }
            } catch {
                binary.discard()
                return Outcome(bytes: bytes + error.line(index: index).utf8, closes: error.closesConnection)
            }
        }
        return Outcome(bytes: bytes + "OK\n".utf8, closes: false)
    }

    /// True when every one of `lines` is quick to carry out: no file read or written (beyond one file's time of
    /// change), so that the connection's event loop may carry them out in its own turn. The others (adding songs,
    /// which checks each file; the stored playlists; listings that name many files) run off the loop.
    package static func isQuick(_ lines: [String]) -> Bool {
        lines.allSatisfy { line in
            let name = line.utf8.prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
            return !slowCommands.contains(String(Substring(name)))
        }
    }

    private static let slowCommands: Set<String> = [
        "add", "addid", "load", "save", "rm", "rename", "playlistadd", "playlistdelete", "playlistclear", "lsinfo",
        "listplaylists", "listplaylist", "listplaylistinfo", "playlist", "playlistinfo", "playlistid", "plchanges",
        "listall", "listallinfo", "find", "search", "findadd", "searchadd", "count", "list", "stats", "albumart",
        "readpicture", "readcomments", "listfiles", "playlistfind", "playlistsearch", "sticker", "playlistmove",
        "searchaddpl",
    ]

    private static func arityMessage(_ arguments: ClosedRange<Int>, _ request: MPDRequest) -> String {
        if arguments.lowerBound == arguments.upperBound { return "wrong number of arguments for \"\(request.name)\"" }
        return request.arguments.count < arguments.lowerBound
            ? "too few arguments for \"\(request.name)\"" : "too many arguments for \"\(request.name)\""
    }

    /// One command: how many arguments it takes, and what it does (nil: close the connection, answering nothing).
    struct Command: Sendable {
        /// What the client must be allowed to run it (nothing: anyone).
        var permission: MPDPermissions = .read
        var arguments: ClosedRange<Int>
        var run: @Sendable (MPDCommandRunner, [String]) throws(MPDError) -> String?
    }

    /// Every command carried out, by name: what `commands` lists. Any other name is answered as unknown.
    static let commands: [String: Command] = [
        "ping": Command(permission: [], arguments: 0...0) { _, _ throws(MPDError) in "" },
        "close": Command(permission: [], arguments: 0...0) { _, _ throws(MPDError) in nil },
        "commands": Command(permission: [], arguments: 0...0) { runner, _ throws(MPDError) in
            runner.commandNames(permitted: true)
        },
        "tagtypes": Command(permission: [], arguments: 0...Int.max) { runner, arguments throws(MPDError) in
            try runner.tags.command(arguments)
        },
        "notcommands": Command(permission: [], arguments: 0...0) { runner, _ throws(MPDError) in
            runner.commandNames(permitted: false)
        },
        "password": Command(permission: [], arguments: 1...1) { runner, arguments throws(MPDError) in
            guard let granted = runner.access.passwords[arguments[0]] else {
                throw MPDError(.password, "incorrect password")
            }
            runner.permissions.grant(granted)
            return ""
        },
        "config": Command(permission: .admin, arguments: 0...0) { runner, _ throws(MPDError) in
            guard runner.isLocalClient else {
                throw MPDError(.permission, "Command only permitted to local clients")
            }
            return "music_directory: \(runner.musicFolder.path)\n"
        },
        "kill": Command(permission: .admin, arguments: 0...0) { runner, _ throws(MPDError) in
            _ = try runner.carryOut(.quit)
            return nil
        },
        "clearerror": Command(permission: .player, arguments: 0...0) { _, _ throws(MPDError) in "" },
        "status": Command(arguments: 0...0) { runner, _ throws(MPDError) in runner.status() },
        "currentsong": Command(arguments: 0...0) { runner, _ throws(MPDError) in runner.currentSong() },
        "playlistinfo": Command(arguments: 0...1) { runner, arguments throws(MPDError) in
            try runner.playlistInfo(arguments.first)
        },
        "playlist": Command(arguments: 0...0) { runner, _ throws(MPDError) in runner.playlist() },
        "playlistid": Command(arguments: 0...1) { runner, arguments throws(MPDError) in
            try runner.playlistID(arguments.first)
        },
        "plchanges": Command(arguments: 1...2) { runner, arguments throws(MPDError) in
            try runner.changes(since: arguments[0], range: arguments.dropFirst().first, positionsOnly: false)
        },
        "plchangesposid": Command(arguments: 1...2) { runner, arguments throws(MPDError) in
            try runner.changes(since: arguments[0], range: arguments.dropFirst().first, positionsOnly: true)
        },
        "outputs": Command(arguments: 0...0) { runner, _ throws(MPDError) in runner.outputs() },
        "decoders": Command(arguments: 0...0) { _, _ throws(MPDError) in
            "plugin: mpg123\nsuffix: mp3\nmime_type: audio/mpeg\n"
        },
        "urlhandlers": Command(arguments: 0...0) { _, _ throws(MPDError) in "handler: http://\nhandler: https://\n" },
        "play": Command(permission: .player, arguments: 0...1) { runner, arguments throws(MPDError) in
            try runner.play(position: arguments.first)
        },
        "playid": Command(permission: .player, arguments: 0...1) { runner, arguments throws(MPDError) in
            try runner.play(id: arguments.first)
        },
        "pause": Command(permission: .player, arguments: 0...1) { runner, arguments throws(MPDError) in
            try runner.pause(arguments.first)
        },
        "stop": Command(permission: .player, arguments: 0...0) { runner, _ throws(MPDError) in
            try runner.carryOut(.stop)
        },
        "next": Command(permission: .player, arguments: 0...0) { runner, _ throws(MPDError) in
            try runner.carryOut(.next)
        },
        "previous": Command(permission: .player, arguments: 0...0) { runner, _ throws(MPDError) in
            try runner.carryOut(.previous)
        },
        "seek": Command(permission: .player, arguments: 2...2) { runner, arguments throws(MPDError) in
            try runner.seek(position: arguments[0], to: arguments[1])
        },
        "seekid": Command(permission: .player, arguments: 2...2) { runner, arguments throws(MPDError) in
            try runner.seek(id: arguments[0], to: arguments[1])
        },
        "seekcur": Command(permission: .player, arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.seekCurrent(arguments[0])
        },
        "setvol": Command(permission: .player, arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.carryOut(
                .volume(Double(try MPDArguments.integer(arguments[0], in: 0...100)) / 100, relative: false))
        },
        "volume": Command(permission: .player, arguments: 1...1) { runner, arguments throws(MPDError) in
            let change = try MPDArguments.integer(arguments[0], in: -100...100)
            return try runner.carryOut(.volume(Double(change) / 100, relative: true))
        },
        "getvol": Command(arguments: 0...0) { runner, _ throws(MPDError) in
            "volume: \(volumePercent(runner.controller.mpdState().snapshot))\n"
        },
        "repeat": Command(permission: .player, arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.setRepeat(try MPDArguments.boolean(arguments[0]))
        },
        "single": Command(permission: .player, arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.setSingle(arguments[0])
        },
        "random": Command(permission: .player, arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.carryOut(.shuffle(try MPDArguments.boolean(arguments[0]) ? .on : .off))
        },
        "consume": Command(permission: .player, arguments: 1...1) { _, arguments throws(MPDError) in
            guard try MPDArguments.boolean(arguments[0]) else {
                throw MPDError(.argument, "played songs always leave the queue here; consume cannot be turned off")
            }
            return ""
        },
        "add": Command(permission: .add, arguments: 1...2) { runner, arguments throws(MPDError) in
            try runner.add(arguments[0], at: arguments.dropFirst().first, answeringID: false)
        },
        "addid": Command(permission: .add, arguments: 1...2) { runner, arguments throws(MPDError) in
            try runner.add(arguments[0], at: arguments.dropFirst().first, answeringID: true)
        },
        "addtagid": Command(permission: .add, arguments: 3...3) { runner, arguments throws(MPDError) in
            try runner.addTag(id: arguments[0], name: arguments[1], value: arguments[2])
        },
        "cleartagid": Command(permission: .add, arguments: 1...2) { runner, arguments throws(MPDError) in
            try runner.clearTags(id: arguments[0], name: arguments.dropFirst().first)
        },
        "rangeid": Command(permission: .add, arguments: 2...2) { runner, arguments throws(MPDError) in
            try runner.setRange(id: arguments[0], range: arguments[1])
        },
        "lsinfo": Command(arguments: 0...1) { runner, arguments throws(MPDError) in
            try runner.listInfo(arguments.first)
        },
        "listall": Command(arguments: 0...1) { runner, arguments throws(MPDError) in
            try runner.listAll(arguments.first, withInfo: false)
        },
        "listallinfo": Command(arguments: 0...1) { runner, arguments throws(MPDError) in
            try runner.listAll(arguments.first, withInfo: true)
        },
        "update": Command(permission: .control, arguments: 0...1) { runner, arguments throws(MPDError) in
            try runner.update(arguments.first, rereadingAll: false)
        },
        "rescan": Command(permission: .control, arguments: 0...1) { runner, arguments throws(MPDError) in
            try runner.update(arguments.first, rereadingAll: true)
        },
        "stats": Command(arguments: 0...0) { runner, _ throws(MPDError) in try runner.stats() },
        "albumart": Command(arguments: 2...2) { runner, arguments throws(MPDError) in
            try runner.albumArt(arguments[0], offset: arguments[1])
        },
        "readpicture": Command(arguments: 2...2) { runner, arguments throws(MPDError) in
            try runner.readPicture(arguments[0], offset: arguments[1])
        },
        "readcomments": Command(arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.readComments(arguments[0])
        },
        "binarylimit": Command(permission: [], arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.binary.setLimit(arguments[0])
        },
        "listfiles": Command(arguments: 0...1) { runner, arguments throws(MPDError) in
            try runner.listFiles(arguments.first)
        },
        "replay_gain_mode": Command(permission: .player, arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.setReplayGainMode(arguments[0])
        },
        "replay_gain_status": Command(arguments: 0...0) { runner, _ throws(MPDError) in
            "replay_gain_mode: \(replayGainModeName(runner.controller.mpdState().snapshot.replayGain))\n"
        },
        "find": Command(arguments: 1...Int.max) { runner, arguments throws(MPDError) in
            try runner.find(arguments, foldsCase: false)
        },
        "search": Command(arguments: 1...Int.max) { runner, arguments throws(MPDError) in
            try runner.find(arguments, foldsCase: true)
        },
        "findadd": Command(permission: .add, arguments: 1...Int.max) { runner, arguments throws(MPDError) in
            try runner.findAdd(arguments, foldsCase: false)
        },
        "searchadd": Command(permission: .add, arguments: 1...Int.max) { runner, arguments throws(MPDError) in
            try runner.findAdd(arguments, foldsCase: true)
        },
        "playlistfind": Command(arguments: 1...Int.max) { runner, arguments throws(MPDError) in
            try runner.findInQueue(arguments, foldsCase: false)
        },
        "playlistsearch": Command(arguments: 1...Int.max) { runner, arguments throws(MPDError) in
            try runner.findInQueue(arguments, foldsCase: true)
        },
        "count": Command(arguments: 1...Int.max) { runner, arguments throws(MPDError) in
            try runner.count(arguments)
        },
        "list": Command(arguments: 1...Int.max) { runner, arguments throws(MPDError) in try runner.list(arguments) },
        "listplaylists": Command(arguments: 0...0) { runner, _ throws(MPDError) in runner.listPlaylists() },
        "listplaylist": Command(arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.listPlaylist(arguments[0], withInfo: false)
        },
        "listplaylistinfo": Command(arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.listPlaylist(arguments[0], withInfo: true)
        },
        "load": Command(permission: .add, arguments: 1...2) { runner, arguments throws(MPDError) in
            try runner.load(arguments[0], range: arguments.dropFirst().first)
        },
        "save": Command(permission: .control, arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.save(arguments[0])
        },
        "rm": Command(permission: .control, arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.remove(arguments[0])
        },
        "rename": Command(permission: .control, arguments: 2...2) { runner, arguments throws(MPDError) in
            try runner.rename(arguments[0], to: arguments[1])
        },
        "playlistadd": Command(permission: .control, arguments: 2...2) { runner, arguments throws(MPDError) in
            try runner.playlistAdd(arguments[0], arguments[1])
        },
        "playlistdelete": Command(permission: .control, arguments: 2...2) { runner, arguments throws(MPDError) in
            try runner.playlistDelete(arguments[0], position: arguments[1])
        },
        "playlistmove": Command(permission: .control, arguments: 3...3) { runner, arguments throws(MPDError) in
            try runner.playlistMove(arguments[0], from: arguments[1], to: arguments[2])
        },
        "searchaddpl": Command(permission: .control, arguments: 2...Int.max) { runner, arguments throws(MPDError) in
            try runner.searchAddToPlaylist(arguments)
        },
        "playlistclear": Command(permission: .control, arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.playlistClear(arguments[0])
        },
        "clear": Command(permission: .player, arguments: 0...0) { runner, _ throws(MPDError) in
            try runner.carryOut(.clear)
        },
        "delete": Command(permission: .player, arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.delete(positions: arguments[0])
        },
        "deleteid": Command(permission: .player, arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.delete(id: arguments[0])
        },
        "move": Command(permission: .player, arguments: 2...2) { runner, arguments throws(MPDError) in
            try runner.move(positions: arguments[0], to: arguments[1])
        },
        "moveid": Command(permission: .player, arguments: 2...2) { runner, arguments throws(MPDError) in
            try runner.move(id: arguments[0], to: arguments[1])
        },
        "swap": Command(permission: .player, arguments: 2...2) { runner, arguments throws(MPDError) in
            try runner.swap(position: arguments[0], arguments[1])
        },
        "swapid": Command(permission: .player, arguments: 2...2) { runner, arguments throws(MPDError) in
            try runner.swap(id: arguments[0], arguments[1])
        },
        "shuffle": Command(permission: .player, arguments: 0...1) { runner, arguments throws(MPDError) in
            try runner.shuffle(arguments.first)
        },
        "subscribe": Command(arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.mailbox.messages.subscribe(runner.mailbox, to: arguments[0])
            return ""
        },
        "unsubscribe": Command(arguments: 1...1) { runner, arguments throws(MPDError) in
            try runner.mailbox.messages.unsubscribe(runner.mailbox, from: arguments[0])
            return ""
        },
        "channels": Command(arguments: 0...0) { runner, _ throws(MPDError) in
            runner.mailbox.messages.channels().map { "channel: \($0)\n" }.joined()
        },
        "readmessages": Command(arguments: 0...0) { runner, _ throws(MPDError) in
            runner.mailbox.messages.read(runner.mailbox).map { "channel: \($0.channel)\nmessage: \($0.text)\n" }
                .joined()
        },
        "sendmessage": Command(permission: .control, arguments: 2...2) { runner, arguments throws(MPDError) in
            try runner.mailbox.messages.send(arguments[1], to: arguments[0])
            return ""
        },
        "sticker": Command(permission: .admin, arguments: 3...Int.max) { runner, arguments throws(MPDError) in
            try runner.sticker(arguments)
        },
        "prio": Command(permission: .player, arguments: 2...Int.max) { runner, arguments throws(MPDError) in
            try runner.setPriority(arguments[0], positions: arguments.dropFirst())
        },
        "prioid": Command(permission: .player, arguments: 2...Int.max) { runner, arguments throws(MPDError) in
            try runner.setPriority(arguments[0], ids: arguments.dropFirst())
        },
    ]

    /// `commands` (those the client may run) or `notcommands` (those it may not), as MPD lists them: `idle` among
    /// them (it needs `read`), but neither `noidle` nor the command list's lines.
    func commandNames(permitted: Bool) -> String {
        let granted = permissions.current
        let permissions = Self.commands.mapValues(\.permission).merging(["idle": .read]) { first, _ in first }
        return permissions.filter { granted.isSuperset(of: $0.value) == permitted }.keys.sorted()
            .map { "command: \($0)\n" }.joined()
    }

    /// The volume as MPD gives it: a whole percentage.
    static func volumePercent(_ snapshot: PlayerSnapshot) -> Int { Int((snapshot.volume * 100).rounded()) }

    /// Carries out `command` on the controller's path; an empty answer, or the controller's error.
    func carryOut(_ command: ControlCommand) throws(MPDError) -> String {
        let reply = controller.execute(command, id: nil)
        guard reply.ok == true else { throw MPDError(.system, reply.error ?? "failed") }
        return ""
    }
}

import Foundation
import NIOCore
import QueuePlayerControl
import QueuePlayerService
import TestTiers
import Testing

@Suite("The control protocol: one typed command, written by the client and read by the server", .tier(.deterministic))
struct ControlProtocolTests {
    /// One command of each name, with the JSON object an existing client sends for it.
    static let examples: [(ControlCommand, String)] = [
        (.play, #"{"command":"play"}"#), (.pause, #"{"command":"pause"}"#),
        (.playPause, #"{"command":"play-pause"}"#), (.stop, #"{"command":"stop"}"#), (.next, #"{"command":"next"}"#),
        (.previous, #"{"command":"previous"}"#), (.status, #"{"command":"status"}"#),
        (.metadata, #"{"command":"metadata"}"#), (.queue, #"{"command":"queue"}"#), (.clear, #"{"command":"clear"}"#),
        (.background, #"{"command":"background"}"#), (.foreground, #"{"command":"foreground"}"#),
        (.quit, #"{"command":"quit"}"#), (.subscribe(interval: 0.5), #"{"command":"subscribe","interval":0.5}"#),
        (.position(30, relative: false), #"{"command":"position","seconds":30}"#),
        (.position(-5, relative: true), #"{"command":"position","seconds":-5,"relative":true}"#),
        (.volume(nil, relative: false), #"{"command":"volume"}"#),
        (.volume(0.1, relative: true), #"{"command":"volume","level":0.1,"relative":true}"#),
        (.open("/music/a.mp3"), #"{"command":"open","uri":"/music/a.mp3"}"#),
        (.add(["/music/a.mp3", "/music/b"]), #"{"command":"add","items":["/music/a.mp3","/music/b"]}"#),
        (.add(["/f.rss"], unplayed: true), #"{"command":"add","items":["/f.rss"],"unplayed":true}"#),
        (.insert(["/music/c.mp3"], after: 7), #"{"command":"insert","items":["/music/c.mp3"],"after":7}"#),
        (.remove([7]), #"{"command":"remove","item":7}"#),
        (.remove([7, 9]), #"{"command":"remove","ids":[7,9]}"#),
        (.move(7, to: 2), #"{"command":"move","item":7,"to":2}"#),
        (.priority(9, ids: [7, 8]), #"{"command":"priority","priority":9,"ids":[7,8]}"#),
        (.rearrange(ids: [8, 7]), #"{"command":"rearrange","ids":[8,7]}"#),
        (.tag(item: 7, name: "Title", value: "Song"), #"{"command":"tag","item":7,"name":"Title","value":"Song"}"#),
        (.untag(item: 7, name: nil), #"{"command":"untag","item":7}"#),
        (.untag(item: 7, name: "Artist"), #"{"command":"untag","item":7,"name":"Artist"}"#),
        (.range(item: 7, start: 1.5, end: 3), #"{"command":"range","end":3,"item":7,"start":1.5}"#),
        (.range(item: 7, start: nil, end: nil), #"{"command":"range","item":7}"#),
        (.loop(nil), #"{"command":"loop"}"#), (.loop(.track), #"{"command":"loop","status":"Track"}"#),
        (.shuffle(nil), #"{"command":"shuffle"}"#), (.shuffle(.toggle), #"{"command":"shuffle","status":"Toggle"}"#),
        (.modes(repeat: nil, single: nil), #"{"command":"modes"}"#),
        (.modes(repeat: false, single: .once), #"{"command":"modes","repeat":false,"single":"Once"}"#),
        (.replayGain(nil), #"{"command":"replaygain"}"#),
        (.replayGain(.album), #"{"command":"replaygain","mode":"Album"}"#),
    ]

    private static func object(_ json: Data) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: json) as? NSDictionary)
    }

    private static func parse(_ line: String) -> ControlRequestParser.Outcome {
        ControlRequestParser.parse(.line(ByteBuffer(string: line)))
    }

    @Test("every command name has an example")
    func everyName() {
        #expect(Set(Self.examples.map(\.0.name)) == Set(ControlCommand.Name.allCases))
    }

    @Test("each command is written as the JSON clients have always sent, and read back as itself with its id")
    func roundTrip() throws {
        for (command, json) in Self.examples {
            let written = try JSONEncoder().encode(ControlRequest(command, id: .number(3)))
            let expected = try #require(Self.object(Data(json.utf8)).mutableCopy() as? NSMutableDictionary)
            expected["id"] = 3
            #expect(try Self.object(written) == expected, "\(command)")
            guard case .command(let id, let read) = Self.parse(String(decoding: written, as: UTF8.self)) else {
                Issue.record("\(json) was refused")
                continue
            }
            #expect(read == command && id == .number(3), "\(json)")
        }
    }

    @Test("a bad request is refused with a message naming the command or field, and its id when it has one")
    func refusals() {
        let cases: [(String, String)] = [
            (#"{"id": "a", "command": "frobnicate"}"#, "unknown command 'frobnicate'; the commands are play, pause"),
            (#"{"id": "a", "command": "remove"}"#, "remove: needs 'item' (a queue id, or 'ids': several)"),
            (#"{"id": "a", "command": "volume", "level": "loud"}"#, "request field 'level' must be a number"),
            (#"{"id": "a", "command": "subscribe", "interval": 0}"#, "subscribe: 'interval' must be at least 0.01"),
            (#"{"id": "a"}"#, "request needs 'command'"),
            (#"{"id": "a", "command": "loop", "status": "Often"}"#, "'Often' is not one of None, Track, Playlist"),
            (#"{"id": "a", "command": "modes", "single": "Twice"}"#, "modes: 'Twice' is not one of Off, On, Once"),
            (#"{"id": "a", "command": "modes", "repeat": "yes"}"#, "request field 'repeat' must be"),
            (#"{"id": "a", "command": "range", "item": 7, "start": -1}"#, "range: 'start' must be a number of seconds"),
            (#"{"id": "a", "command": "range", "item": 7, "start": 2, "end": 1}"#, "range: 'end' must be a number"),
            (#"{"id": "a", "command": "range", "start": 1}"#, "range: needs 'item' (a queue id)"),
        ]
        for (line, words) in cases {
            guard case .failure(let id, let message) = Self.parse(line) else {
                Issue.record("\(line) was accepted")
                continue
            }
            #expect(id == .text("a"), "\(line)")
            #expect(message.contains(words), "\(line): \(message)")
        }
    }
}

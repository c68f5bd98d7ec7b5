import QueuePlayerControl

/// A request snapserver sends its stream plugin on standard input (JSON-RPC 2.0, one object a line), such as
/// `{"id":3,"jsonrpc":"2.0","method":"Plugin.Stream.Player.Control","params":{"command":"seek","params":{"offset":5}}}`.
struct SnapcastPluginRequest: Decodable {
    struct Parameters: Decodable {
        /// `Control`: play, pause, playPause, stop, next, previous, setPosition or seek.
        var command: String?
        /// `Control`'s arguments: `position` for setPosition, `offset` for seek (seconds).
        var params: Arguments?
        /// `SetProperty`: 0 to 100.
        var volume: Double?
        var loopStatus: String?
        var shuffle: Bool?
        var mute: Bool?
        var rate: Double?
    }

    struct Arguments: Decodable {
        var position: Double?
        var offset: Double?
    }

    var id: RequestID?
    var method: String
    var params: Parameters?

    /// What the request asks of the daemon: a control request, no request (`GetProperties`, answered from the last
    /// state), or an error naming what QueuePlayer cannot do.
    enum Meaning {
        case daemon(ControlRequest)
        case properties
        case refused(code: Int, message: String)
    }

    var meaning: Meaning {
        switch method {
        case "Plugin.Stream.Player.GetProperties": return .properties
        case "Plugin.Stream.Player.Control": return control
        case "Plugin.Stream.Player.SetProperty": return setProperty
        default: return .refused(code: -32601, message: "method not found: \(method)")
        }
    }

    private var control: Meaning {
        let commands: [String: ControlCommand] = [
            "play": .play, "pause": .pause, "playPause": .playPause, "stop": .stop, "next": .next,
            "previous": .previous,
        ]
        let command = params?.command ?? ""
        if let known = commands[command] { return .daemon(ControlRequest(known)) }
        switch command {
        case "setPosition":
            guard let position = params?.params?.position else { return missing("position", of: command) }
            return .daemon(ControlRequest(.position(position, relative: false)))
        case "seek":
            guard let offset = params?.params?.offset else { return missing("offset", of: command) }
            return .daemon(ControlRequest(.position(offset, relative: true)))
        default:
            return .refused(code: -32602, message: "unknown Control command \"\(command)\"")
        }
    }

    private var setProperty: Meaning {
        if let volume = params?.volume {
            return .daemon(ControlRequest(.volume(max(0, min(100, volume)) / 100, relative: false)))
        }
        if let name = params?.loopStatus {
            guard let status = LoopStatus(named: name) else {
                return .refused(code: -32602, message: "loopStatus '\(name)' is not one of none, track, playlist")
            }
            return .daemon(ControlRequest(.loop(status)))
        }
        if let shuffle = params?.shuffle { return .daemon(ControlRequest(.shuffle(shuffle ? .on : .off))) }
        if params?.mute ?? false { return .refused(code: -32602, message: "QueuePlayer has no mute: set volume 0") }
        if let rate = params?.rate, rate != 1 {
            return .refused(code: -32602, message: "QueuePlayer plays at rate 1 only")
        }
        return .refused(code: -32602, message: "SetProperty needs volume (0 to 100)")
    }

    private func missing(_ field: String, of command: String) -> Meaning {
        .refused(code: -32602, message: "Control \(command) needs params.\(field) in seconds")
    }
}

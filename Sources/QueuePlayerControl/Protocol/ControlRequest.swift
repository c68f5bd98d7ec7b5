import FoundationEssentials

/// One request on the control socket: a JSON object on one line, such as
/// `{"id": 3, "command": "volume", "level": 0.5}`.
///
/// `id` (any number or string) is echoed in the reply. The other fields depend on the command (see
/// ``ControlCommand``); unknown fields are ignored, a field of the wrong type is an error naming it.
package struct ControlRequest: Codable, Sendable {
    package var id: RequestID?
    package var command: String
    package var seconds: Double?
    package var level: Double?
    package var relative: Bool?
    package var uri: String?
    package var items: [String]?
    package var item: Int?
    package var after: Int?
    package var to: Int?
    package var interval: Double?

    package init(command: String) {
        self.command = command
    }
}

/// A request's `id`: a number or a string, echoed back as it came.
package enum RequestID: Codable, Sendable, Equatable {
    case number(Double)
    case text(String)

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            self = .text(try container.decode(String.self))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .number(let number): try container.encode(number)
        case .text(let text): try container.encode(text)
        }
    }
}

/// What a request asks for, checked.
package enum ControlCommand: Sendable, Equatable {
    case play, pause, playPause, stop, next, previous, status, metadata, queue, clear
    case background, foreground, quit
    /// `subscribe`: state events after every change; with `interval` (seconds), also at every multiple of it in
    /// the item's time while playing.
    case subscribe(interval: Double?)
    /// `position`: report (nil) or seek to `seconds`, or by `seconds` when relative.
    case position(Double?, relative: Bool)
    /// `volume`: report (nil) or set to `level` (0…1), or change by `level` when relative.
    case volume(Double?, relative: Bool)
    case open(String)
    case add([String])
    case insert([String], after: Int)
    case remove(Int)
    case move(Int, to: Int)

    /// Every command name, for the error that names an unknown one.
    package static let names = [
        "play", "pause", "play-pause", "stop", "next", "previous", "status", "metadata", "queue", "clear",
        "background", "foreground", "quit", "subscribe", "position", "volume", "open", "add", "insert", "remove",
        "move",
    ]

    /// True for a command that checks files before it acts (`open`, `add`, `insert`): it may take a while.
    package var readsFiles: Bool {
        switch self {
        case .open, .add, .insert: true
        default: false
        }
    }

    /// The shortest position interval a subscription may ask for.
    package static let shortestSubscriptionInterval = 0.01

    /// True for a command that only reports: it changes nothing, writes nothing and tells no subscriber.
    package var isRead: Bool {
        switch self {
        case .status, .metadata, .queue, .subscribe, .position(nil, _), .volume(nil, _): true
        default: false
        }
    }

    /// Checks `request`; throws a message naming what is missing or wrong.
    package init(_ request: ControlRequest) throws(ControlError) {
        func required<T>(_ value: T?, _ field: String, _ kind: String) throws(ControlError) -> T {
            guard let value else { throw ControlError("\(request.command): needs '\(field)' (\(kind))") }
            return value
        }
        switch request.command {
        case "play": self = .play
        case "pause": self = .pause
        case "play-pause": self = .playPause
        case "stop": self = .stop
        case "next": self = .next
        case "previous": self = .previous
        case "status": self = .status
        case "metadata": self = .metadata
        case "queue": self = .queue
        case "clear": self = .clear
        case "background": self = .background
        case "foreground": self = .foreground
        case "quit": self = .quit
        case "subscribe":
            if let interval = request.interval, !(interval >= Self.shortestSubscriptionInterval) {
                throw ControlError(
                    "subscribe: 'interval' must be at least \(Self.shortestSubscriptionInterval) seconds, or left out "
                        + "for events on changes only")
            }
            self = .subscribe(interval: request.interval)
        case "position": self = .position(request.seconds, relative: request.relative ?? false)
        case "volume": self = .volume(request.level, relative: request.relative ?? false)
        case "open": self = .open(try required(request.uri, "uri", "a file path, file:// URI or http(s) URL"))
        case "add": self = .add(try required(request.items, "items", "an array of paths"))
        case "insert":
            self = .insert(
                try required(request.items, "items", "an array of paths"),
                after: try required(request.after, "after", "a queue id"))
        case "remove": self = .remove(try required(request.item, "item", "a queue id"))
        case "move":
            self = .move(
                try required(request.item, "item", "a queue id"), to: try required(request.to, "to", "a position"))
        default:
            throw ControlError(
                "unknown command '\(request.command)'; the commands are \(Self.names.joined(separator: ", "))")
        }
    }
}

/// A request that cannot be carried out; the message names the problem.
package struct ControlError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

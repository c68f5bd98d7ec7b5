import FoundationEssentials

/// One request on the control socket: a JSON object on one line, such as
/// `{"id": 3, "command": "volume", "level": 0.5}`: the request's `id` (any number or string, echoed in the reply)
/// beside its command's name and fields (see ``ControlCommand``), in one object.
///
/// Client and server share this type, so a request is written and read by the same code: a client builds
/// `ControlRequest(.volume(0.5, relative: false))`, never a name or a field by hand. Fields a command does not take
/// are ignored; a missing field, or one of the wrong type, is an error naming it.
package struct ControlRequest: Codable, Sendable, Equatable {
    package var id: RequestID?
    package var command: ControlCommand

    package init(_ command: ControlCommand, id: RequestID? = nil) {
        self.command = command
        self.id = id
    }

    private enum CodingKeys: String, CodingKey {
        case id
    }

    package init(from decoder: any Decoder) throws {
        id = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(RequestID.self, forKey: .id)
        command = try ControlCommand(from: decoder)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(id, forKey: .id)
        try command.encode(to: encoder)
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
package enum ControlCommand: Sendable, Equatable, Codable {
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
    /// `add`: the items at the end of the queue; with `unplayed`, less the podcast episodes already played.
    case add([String], unplayed: Bool = false)
    case insert([String], after: Int)
    /// `remove`: the queued items with these ids, in one change (`item`: one id; `ids`: several).
    case remove([Int])
    case move(Int, to: Int)
    /// `priority`: gives the queued items with these ids a priority (0…255; MPD's `prio`), which orders the items to
    /// come while shuffled.
    case priority(Int, ids: [Int])
    /// `rearrange`: puts the queue in the order of `ids`, every queued item's id once (MPD's `shuffle`, `swap` and
    /// range `move`); a new first item plays from its start.
    case rearrange(ids: [Int])
    /// `tag`: gives the queued remote item `item` the tag `name` (one of MPD's tag names) with `value`, after any it
    /// has (MPD's `addtagid`): what a station or a server's file is shown as until it sends tags of its own.
    case tag(item: Int, name: String, value: String)
    /// `untag`: takes back the tags `name` given to the queued item `item`, or every tag given to it when nil
    /// (MPD's `cleartagid`).
    case untag(item: Int, name: String?)
    /// `range`: makes the queued item `item` play from `start` to `end` (seconds into it) in place of the whole
    /// item, as if that part were all of it (MPD's `rangeid`); `start` nil is its start, `end` nil its end, both nil
    /// the whole item again. Refused for the current item.
    case range(item: Int, start: Double?, end: Double?)
    /// `loop`: report (nil) or set what plays again.
    case loop(LoopStatus?)
    /// `shuffle`: report (nil), or turn on, off, or over.
    case shuffle(ShuffleStatus?)
    /// `modes`: report (both nil), or set MPD's play modes, either or both as given: `repeat` (the queue plays again,
    /// or with `single` on the current item) and `single` (see ``SingleMode``).
    case modes(repeat: Bool?, single: SingleMode?)
    /// `replaygain`: report (nil) or set which ReplayGain plays.
    case replayGain(ReplayGain?)

    /// A command's name on the wire (the request's `command`), one per case.
    package enum Name: String, CaseIterable, Sendable {
        case play, pause
        case playPause = "play-pause"
        case stop, next, previous, status, metadata, queue, clear, background, foreground, quit, subscribe, position
        case volume, open, add, insert, remove, move, priority, rearrange, tag, untag, range, loop, shuffle
        case modes
        case replayGain = "replaygain"
    }

    /// The name this command is sent by.
    package var name: Name {
        switch self {
        case .play: .play
        case .pause: .pause
        case .playPause: .playPause
        case .stop: .stop
        case .next: .next
        case .previous: .previous
        case .status: .status
        case .metadata: .metadata
        case .queue: .queue
        case .clear: .clear
        case .background: .background
        case .foreground: .foreground
        case .quit: .quit
        case .subscribe: .subscribe
        case .position: .position
        case .volume: .volume
        case .open: .open
        case .add: .add
        case .insert: .insert
        case .remove: .remove
        case .move: .move
        case .priority: .priority
        case .rearrange: .rearrange
        case .tag: .tag
        case .untag: .untag
        case .range: .range
        case .loop: .loop
        case .shuffle: .shuffle
        case .modes: .modes
        case .replayGain: .replayGain
        }
    }

    /// True for a command that checks files before it acts (`open`, `add`, `insert`): it may take a while.
    package var readsFiles: Bool {
        switch self {
        case .open, .add, .insert: true
        default: false
        }
    }

    /// A `priority` command's priority as the player takes it; an error naming the range when it is outside it.
    package static func priorityLevel(_ priority: Int) throws(ControlError) -> UInt8 {
        guard let level = UInt8(exactly: priority) else {
            throw ControlError("priority: 'priority' must be from 0 to 255, not \(priority)")
        }
        return level
    }

    /// Checks a `range` command's times: each a finite number of seconds, `start` 0 or more, `end` after it (or after
    /// 0); an error naming the one that is not.
    package static func checkRange(start: Double?, end: Double?) throws(ControlError) {
        if let start, !(start.isFinite && start >= 0) {
            throw ControlError("range: 'start' must be a number of seconds from 0 on, not \(start)")
        }
        if let end, !(end.isFinite && end > (start ?? 0)) {
            throw ControlError("range: 'end' must be a number of seconds after 'start' (\(start ?? 0)), not \(end)")
        }
    }

    /// The shortest position interval a subscription may ask for.
    package static let shortestSubscriptionInterval = 0.01

    /// True for a command that only reports: it changes nothing, writes nothing and tells no subscriber.
    package var isRead: Bool {
        switch self {
        case .status, .metadata, .queue, .subscribe, .position(nil, _), .volume(nil, _), .loop(nil), .shuffle(nil),
            .modes(nil, nil), .replayGain(nil):
            true
        default: false
        }
    }

    /// The fields of a request that commands take.
    private enum Field: String, CodingKey {
        case command, seconds, level, relative, uri, items, item, after, to, interval, unplayed, status
        case `repeat`, single, mode, priority, ids, name, value, start, end
    }

    /// Reads a command from a request's object; throws ``ControlError`` naming an unknown command or a missing field,
    /// and the decoder's error for a field of the wrong type.
    package init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: Field.self)
        let spelled = try fields.decode(String.self, forKey: .command)
        guard let name = Name(rawValue: spelled) else {
            let names = Name.allCases.map(\.rawValue).joined(separator: ", ")
            throw ControlError("unknown command '\(spelled)'; the commands are \(names)")
        }
        func required<T: Decodable>(_ field: Field, _ kind: String) throws -> T {
            guard let value = try fields.decodeIfPresent(T.self, forKey: field) else {
                throw ControlError("\(spelled): needs '\(field.rawValue)' (\(kind))")
            }
            return value
        }
        let relative = try fields.decodeIfPresent(Bool.self, forKey: .relative) ?? false
        switch name {
        case .play: self = .play
        case .pause: self = .pause
        case .playPause: self = .playPause
        case .stop: self = .stop
        case .next: self = .next
        case .previous: self = .previous
        case .status: self = .status
        case .metadata: self = .metadata
        case .queue: self = .queue
        case .clear: self = .clear
        case .background: self = .background
        case .foreground: self = .foreground
        case .quit: self = .quit
        case .subscribe:
            let interval = try fields.decodeIfPresent(Double.self, forKey: .interval)
            if let interval, !(interval >= Self.shortestSubscriptionInterval) {
                throw ControlError(
                    "subscribe: 'interval' must be at least \(Self.shortestSubscriptionInterval) seconds, or left out "
                        + "for events on changes only")
            }
            self = .subscribe(interval: interval)
        case .position: self = .position(try fields.decodeIfPresent(Double.self, forKey: .seconds), relative: relative)
        case .volume: self = .volume(try fields.decodeIfPresent(Double.self, forKey: .level), relative: relative)
        case .open: self = .open(try required(.uri, "a file path, file:// URI or http(s) URL"))
        case .add:
            let unplayed = try fields.decodeIfPresent(Bool.self, forKey: .unplayed) ?? false
            self = .add(try required(.items, "an array of paths"), unplayed: unplayed)
        case .insert:
            self = .insert(try required(.items, "an array of paths"), after: try required(.after, "a queue id"))
        case .remove:
            if let ids = try fields.decodeIfPresent([Int].self, forKey: .ids) {
                self = .remove(ids)
            } else {
                self = .remove([try required(.item, "a queue id, or 'ids': several")])
            }
        case .move: self = .move(try required(.item, "a queue id"), to: try required(.to, "a position"))
        case .priority:
            let priority: Int = try required(.priority, "a number from 0 to 255")
            _ = try Self.priorityLevel(priority)
            self = .priority(priority, ids: try required(.ids, "an array of queue ids"))
        case .rearrange: self = .rearrange(ids: try required(.ids, "every queued id, in the order wanted"))
        case .tag:
            self = .tag(
                item: try required(.item, "a queue id"), name: try required(.name, "a tag's name, as MPD names it"),
                value: try required(.value, "the tag's text"))
        case .untag:
            self = .untag(
                item: try required(.item, "a queue id"), name: try fields.decodeIfPresent(String.self, forKey: .name))
        case .range:
            let start = try fields.decodeIfPresent(Double.self, forKey: .start)
            let end = try fields.decodeIfPresent(Double.self, forKey: .end)
            try Self.checkRange(start: start, end: end)
            self = .range(item: try required(.item, "a queue id"), start: start, end: end)
        case .loop:
            let status = try fields.decodeIfPresent(String.self, forKey: .status)
            self = .loop(try status.map { name throws(ControlError) in try LoopStatus.named(name, in: "loop") })
        case .shuffle:
            let status = try fields.decodeIfPresent(String.self, forKey: .status)
            self = .shuffle(
                try status.map { name throws(ControlError) in try ShuffleStatus.named(name, in: "shuffle") })
        case .modes:
            let single = try fields.decodeIfPresent(String.self, forKey: .single)
            self = .modes(
                repeat: try fields.decodeIfPresent(Bool.self, forKey: .repeat),
                single: try single.map { name throws(ControlError) in try SingleMode.named(name, in: "modes") })
        case .replayGain:
            let mode = try fields.decodeIfPresent(String.self, forKey: .mode)
            self = .replayGain(
                try mode.map { name throws(ControlError) in try ReplayGain.named(name, in: "replaygain") })
        }
    }

    /// Writes the command's name and fields into a request's object.
    package func encode(to encoder: any Encoder) throws {
        var fields = encoder.container(keyedBy: Field.self)
        try fields.encode(name.rawValue, forKey: .command)
        switch self {
        case .subscribe(let interval):
            try fields.encodeIfPresent(interval, forKey: .interval)
        case .position(let seconds, let relative):
            try fields.encodeIfPresent(seconds, forKey: .seconds)
            if relative { try fields.encode(true, forKey: .relative) }
        case .volume(let level, let relative):
            try fields.encodeIfPresent(level, forKey: .level)
            if relative { try fields.encode(true, forKey: .relative) }
        case .open(let uri):
            try fields.encode(uri, forKey: .uri)
        case .add(let items, let unplayed):
            try fields.encode(items, forKey: .items)
            if unplayed { try fields.encode(true, forKey: .unplayed) }
        case .insert(let items, let after):
            try fields.encode(items, forKey: .items)
            try fields.encode(after, forKey: .after)
        case .remove(let ids):
            if ids.count == 1 { try fields.encode(ids[0], forKey: .item) } else { try fields.encode(ids, forKey: .ids) }
        case .move(let id, let position):
            try fields.encode(id, forKey: .item)
            try fields.encode(position, forKey: .to)
        case .priority(let priority, let ids):
            try fields.encode(priority, forKey: .priority)
            try fields.encode(ids, forKey: .ids)
        case .rearrange(let ids):
            try fields.encode(ids, forKey: .ids)
        case .tag(let id, let name, let value):
            try fields.encode(id, forKey: .item)
            try fields.encode(name, forKey: .name)
            try fields.encode(value, forKey: .value)
        case .untag(let id, let name):
            try fields.encode(id, forKey: .item)
            try fields.encodeIfPresent(name, forKey: .name)
        case .range(let id, let start, let end):
            try fields.encode(id, forKey: .item)
            try fields.encodeIfPresent(start, forKey: .start)
            try fields.encodeIfPresent(end, forKey: .end)
        case .loop(let status):
            try fields.encodeIfPresent(status?.rawValue, forKey: .status)
        case .shuffle(let status):
            try fields.encodeIfPresent(status?.rawValue, forKey: .status)
        case .modes(let repeats, let single):
            try fields.encodeIfPresent(repeats, forKey: .repeat)
            try fields.encodeIfPresent(single?.rawValue, forKey: .single)
        case .replayGain(let mode):
            try fields.encodeIfPresent(mode?.rawValue, forKey: .mode)
        case .play, .pause, .playPause, .stop, .next, .previous, .status, .metadata, .queue, .clear, .background,
            .foreground, .quit:
            break
        }
    }
}

/// A request that cannot be carried out; the message names the problem.
package struct ControlError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

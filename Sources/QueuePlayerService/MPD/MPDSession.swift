/// One MPD connection's framing, as MPD frames it: single commands, command lists (`command_list_begin` or
/// `command_list_ok_begin` … `command_list_end`), `idle`/`noidle`, and the lines that close the connection. A plain
/// value: the connection's handler feeds it lines and changes and does what it answers.
///
/// Changes are kept per connection while it is not idling, so the next `idle` returns them at once; an `idle`
/// answered clears them all, as MPD's does.
package struct MPDSession: Sendable {
    /// What the handler does next.
    package enum Step: Equatable, Sendable {
        /// Carry out `lines` in order, each answered `list_OK` when `listOK`, the whole answered `OK` unless one
        /// fails (an `ACK` ends it); with `isList` false, a single command.
        case execute(lines: [String], isList: Bool, listOK: Bool)
        /// Write this text.
        case write(String)
        /// Nothing to write yet (a line of a command list, an `idle` with nothing to tell).
        case wait
        /// Close the connection without a word: a line that is not a command, a command during `idle`, a command
        /// list over the limit.
        case close
    }

    /// The most bytes a command list may hold, as MPD's default `max_command_list_size` (2 MiB).
    package static let maximumListBytes = 2 * 1024 * 1024

    private enum Mode: Sendable {
        case commands
        case list(listOK: Bool, lines: [String], bytes: Int)
        case idling(MPDSubsystems)
    }

    private var mode = Mode.commands
    private var pending: MPDSubsystems = []

    package init() {}

    /// True while an `idle` waits.
    package var isIdling: Bool {
        if case .idling = mode { true } else { false }
    }

    /// What to do with `line` (one line, its newline taken off). `mayIdle`: the client has the `read` permission
    /// that `idle` needs.
    package mutating func receive(_ line: String, mayIdle: Bool = true) -> Step {
        guard let first = line.utf8.first, first >= UInt8(ascii: "a"), first <= UInt8(ascii: "z") else {
            // MPD: every command starts with a lower-case letter; anything else is not a client of ours.
            return .close
        }
        switch mode {
        case .idling:
            guard line == "noidle" else { return .close }
            mode = .commands
            return .write("OK\n")
        case .list(let listOK, var lines, let bytes):
            if line == "command_list_end" {
                mode = .commands
                return .execute(lines: lines, isList: true, listOK: listOK)
            }
            guard bytes + line.utf8.count <= Self.maximumListBytes else { return .close }
            lines.append(line)
            mode = .list(listOK: listOK, lines: lines, bytes: bytes + line.utf8.count)
            return .wait
        case .commands:
            switch line {
            case "command_list_begin":
                mode = .list(listOK: false, lines: [], bytes: 0)
                return .wait
            case "command_list_ok_begin":
                mode = .list(listOK: true, lines: [], bytes: 0)
                return .wait
            case "noidle":
                return .wait
            default:
                guard Self.firstWordIsIdle(line), let request = try? MPDRequest.parse(line[...]) else {
                    return .execute(lines: [line], isList: false, listOK: false)
                }
                guard mayIdle else {
                    return .write(
                        MPDError(.permission, "you don't have permission for \"idle\"", command: "idle").line(index: 0))
                }
                return idle(request.arguments)
            }
        }
    }

    /// Whether `line` starts with the word `idle`: only such a line is parsed here (the runner parses the others).
    private static func firstWordIsIdle(_ line: String) -> Bool {
        line.utf8.prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }.elementsEqual("idle".utf8)
    }

    /// Notes `changed`; returns the answer to a waiting `idle` when it waits for one of them.
    package mutating func changed(_ changed: MPDSubsystems) -> String? {
        pending.formUnion(changed)
        guard case .idling(let wanted) = mode, !pending.isDisjoint(with: wanted) else { return nil }
        mode = .commands
        return answer(wanted)
    }

    private mutating func idle(_ names: [String]) -> Step {
        var wanted: MPDSubsystems = []
        for name in names {
            guard let subsystem = MPDSubsystems(name: name) else {
                return .write(MPDError(.argument, "Unrecognized idle event: \(name)", command: "idle").line(index: 0))
            }
            wanted.insert(subsystem)
        }
        if wanted.isEmpty { wanted = .all }
        guard pending.isDisjoint(with: wanted) else { return .write(answer(wanted)) }
        mode = .idling(wanted)
        return .wait
    }

    private mutating func answer(_ wanted: MPDSubsystems) -> String {
        let told = pending.intersection(wanted)
        pending = []
        return told.idleAnswer
    }
}

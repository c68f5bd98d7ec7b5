import CSDBus
import Dispatch
import FoundationEssentials
import Glibc
import Logging
import QueuePlayer
import QueuePlayerControl
import Synchronization

/// The MPRIS2 object on the session bus (`org.mpris.MediaPlayer2.queueplayer`, or `.instance<pid>` when that name
/// is taken), through sd-bus: the standard `playerctl`, desktop widgets and media keys drive the daemon with it.
/// Commands go through the same ``PlayerController`` as the control socket, and the signals come from the same
/// snapshots, so the two never disagree.
///
/// Why `@unchecked Sendable` and the raw pointers are safe: the `sd_bus` and every message are touched only on the
/// bus's own thread (`run()`), which also runs every vtable callback (from `sd_bus_process`). Other threads only
/// hand snapshots over through `pending` (a Mutex) and set `stopping` (an Atomic). The handler table is allocated
/// once, never moved, and freed after the thread has ended; it holds `self` unretained while `self` is alive.
package final class MPRISBus: @unchecked Sendable {
    package static let objectPath = "/org/mpris/MediaPlayer2"
    package static let playerInterface = "org.mpris.MediaPlayer2.Player"
    package static let trackListInterface = "org.mpris.MediaPlayer2.TrackList"
    package static let errorName = "org.mpris.MediaPlayer2.QueuePlayer.Failed"

    /// The bus name taken.
    package let busName: String
    private let controller: PlayerController
    private let logger: Logger
    private let bus: OpaquePointer
    private let handlers: UnsafeMutablePointer<csdbus_handlers>
    private let pending = Mutex<MPRISState?>(nil)
    private let stopping = Atomic<Bool>(false)
    /// An eventfd that wakes the bus thread for a new state or for stop: it waits on the bus and on this, and
    /// otherwise sleeps (no polling).
    private let wakeFD: Int32
    private let finished = DispatchSemaphore(value: 0)
    /// The state last published (bus thread only).
    private var published: MPRISState

    /// Connects to the session bus and registers the object, or returns nil (after one log line) when no session
    /// bus is reachable: MPRIS is never required.
    package static func start(controller: PlayerController, logger: Logger) -> MPRISBus? {
        var bus: OpaquePointer?
        let opened = sd_bus_open_user(&bus)
        guard opened >= 0, let bus else {
            logger.notice("MPRIS: no session bus (\(String(cString: strerror(-opened)))); carrying on without it")
            return nil
        }
        do {
            return try MPRISBus(bus: bus, controller: controller, logger: logger)
        } catch {
            logger.notice("MPRIS: \(error); carrying on without it")
            sd_bus_unref(bus)
            return nil
        }
    }

    private init(bus: OpaquePointer, controller: PlayerController, logger: Logger) throws(ControlError) {
        self.bus = bus
        self.controller = controller
        self.logger = logger
        published = controller.mprisState()
        wakeFD = csdbus_wake_fd_new()
        guard wakeFD >= 0 else {
            throw ControlError("cannot create an eventfd for the bus thread (\(String(cString: strerror(-wakeFD))))")
        }
        handlers = .allocate(capacity: 1)
        handlers.initialize(
            to: csdbus_handlers(
                context: nil,
                method: { context, message, error in
                    Unmanaged<MPRISBus>.fromOpaque(context!).takeUnretainedValue().call(message!, error)
                },
                get: { context, interface, property, reply, error in
                    Unmanaged<MPRISBus>.fromOpaque(context!).takeUnretainedValue()
                        .get(String(cString: interface!), String(cString: property!), reply!, error)
                },
                set: { context, interface, property, value, error in
                    Unmanaged<MPRISBus>.fromOpaque(context!).takeUnretainedValue()
                        .set(String(cString: property!), value!, error)
                }))
        let registered = csdbus_add_mpris_objects(bus, Self.objectPath, handlers)
        guard registered >= 0 else {
            handlers.deallocate()
            close(wakeFD)
            throw ControlError("cannot register the MPRIS object (\(String(cString: strerror(-registered))))")
        }
        var name = "org.mpris.MediaPlayer2.queueplayer"
        if sd_bus_request_name(bus, name, 0) < 0 {
            name += ".instance\(getpid())"
            let second = sd_bus_request_name(bus, name, 0)
            guard second >= 0 else {
                handlers.deallocate()
                close(wakeFD)
                throw ControlError("cannot own \(name) (\(String(cString: strerror(-second))))")
            }
        }
        busName = name
        // No callback runs before `run()` processes the bus, so the context can be filled in last.
        handlers.pointee.context = Unmanaged.passUnretained(self).toOpaque()
        logger.info("MPRIS: on the session bus as \(name)")
    }

    /// Serves the bus until ``stop()``: call from a thread of its own. Wakes only when the bus has something, a
    /// timeout of the bus's falls due, or ``note(_:)`` or ``stop()`` asks. If the bus goes away, the thread says so
    /// once and ends; the player goes on without MPRIS.
    package func run() {
        while !stopping.load(ordering: .acquiring) {
            publishPendingChanges()
            while sd_bus_process(bus, nil) > 0 {}
            let waited = csdbus_wait(bus, wakeFD)
            if waited < 0 {
                logger.notice(
                    "MPRIS: the session bus went away (\(String(cString: strerror(-waited)))); going on without it")
                break
            }
        }
        sd_bus_flush(bus)
        finished.signal()
    }

    /// Hands a new state over to the bus thread, which signals what changed.
    package func note(_ state: MPRISState) {
        pending.withLock { $0 = state }
        csdbus_wake(wakeFD)
    }

    /// Ends the bus thread and releases the connection.
    package func stop() {
        stopping.store(true, ordering: .releasing)
        csdbus_wake(wakeFD)
        finished.wait()
        sd_bus_flush_close_unref(bus)
        handlers.deallocate()
    }

    deinit {
        // Closed here, not in `stop()`: a `note(_:)` racing with `stop()` may still write to it.
        close(wakeFD)
    }

    // MARK: Signals (bus thread)

    private func publishPendingChanges() {
        guard
            let state = pending.withLock({ current -> MPRISState? in
                defer { current = nil }
                return current
            })
        else { return }
        let old = published
        published = state
        for property in state.changedPlayerProperties(since: old) {
            _ = csdbus_emit_property_changed(bus, Self.objectPath, Self.playerInterface, property)
        }
        if state.snapshot.jumps != old.snapshot.jumps {
            emitSignal(Self.playerInterface, "Seeked") { append($0, int64: Int64(state.snapshot.position * 1e6)) }
        }
        let trackListChange = state.trackListChange(since: old)
        if trackListChange != nil {
            _ = csdbus_emit_property_changed(bus, Self.objectPath, Self.trackListInterface, "Tracks")
        }
        switch trackListChange {
        case .replaced:
            emitSignal(Self.trackListInterface, "TrackListReplaced") { message in
                appendPaths(message, state.queue.map { MPRISState.trackPath($0.id) })
                append(message, path: state.queue.first.map { MPRISState.trackPath($0.id) } ?? MPRISState.noTrack)
            }
        case .edited(let removed, let added):
            for id in removed {
                emitSignal(Self.trackListInterface, "TrackRemoved") { append($0, path: MPRISState.trackPath(id)) }
            }
            for (entry, after) in added {
                emitSignal(Self.trackListInterface, "TrackAdded") { message in
                    appendMetadata(message, state.metadata(for: entry))
                    append(message, path: after.map(MPRISState.trackPath) ?? MPRISState.noTrack)
                }
            }
        case nil:
            break
        }
    }

    private func emitSignal(_ interface: String, _ member: String, _ body: (OpaquePointer) -> Void) {
        var message: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &message, Self.objectPath, interface, member) >= 0, let message else {
            return
        }
        body(message)
        _ = sd_bus_send(bus, message, nil)
        sd_bus_message_unref(message)
    }

    // MARK: Calls (bus thread)

    private func call(_ message: OpaquePointer, _ error: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
        let member = String(cString: sd_bus_message_get_member(message))
        let command: ControlCommand?
        var ifCurrentEntry: Int?
        switch member {
        case "Raise": command = nil
        case "Quit": command = .quit
        case "Next": command = .next
        case "Previous": command = .previous
        case "Pause": command = .pause
        case "PlayPause": command = .playPause
        case "Stop": command = .stop
        case "Play": command = .play
        case "Seek": command = .position(Double(readInt64(message)) / 1e6, relative: true)
        case "SetPosition":
            // A stale track id (the item changed meanwhile) is ignored, as the specification asks.
            ifCurrentEntry = MPRISState.entryID(readString(message, type: "o")) ?? -1
            command = .position(Double(readInt64(message)) / 1e6, relative: false)
        case "OpenUri": command = .open(readString(message, type: "s"))
        case "GetTracksMetadata": return replyTracksMetadata(message)
        case "AddTrack":
            let uri = readString(message, type: "s")
            let after = MPRISState.entryID(readString(message, type: "o"))
            var playsNow: Int32 = 0
            _ = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &playsNow)
            let path = uri.hasPrefix("file://") ? URL(string: uri)?.path ?? uri : uri
            if playsNow != 0 {
                command = .open(path)
            } else if let after {
                command = .insert([path], after: after)
            } else {
                command = .add([path])
            }
        case "RemoveTrack": command = MPRISState.entryID(readString(message, type: "o")).map { .remove([$0]) }
        case "GoTo": command = MPRISState.entryID(readString(message, type: "o")).map { .move($0, to: 1) }
        default:
            return sd_bus_error_set(error, "org.freedesktop.DBus.Error.UnknownMethod", "no method \(member)")
        }
        if let command {
            if command == .quit {
                let result = csdbus_reply_empty(message)
                controller.quit()
                return result
            }
            let reply = controller.execute(command, id: nil, ifCurrentEntry: ifCurrentEntry)
            if reply.ok != true {
                return sd_bus_error_set(error, Self.errorName, reply.error ?? "refused")
            }
        }
        return csdbus_reply_empty(message)
    }

    private func replyTracksMetadata(_ call: OpaquePointer) -> Int32 {
        var ids: [Int] = []
        if sd_bus_message_enter_container(call, CChar(UInt8(ascii: "a")), "o") >= 0 {
            var path: UnsafePointer<CChar>?
            while sd_bus_message_read_basic(call, CChar(UInt8(ascii: "o")), &path) > 0, let path {
                if let id = MPRISState.entryID(String(cString: path)) { ids.append(id) }
            }
            _ = sd_bus_message_exit_container(call)
        }
        let state = controller.mprisState()
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(call, &reply) >= 0, let reply else { return -ENOMEM }
        defer { sd_bus_message_unref(reply) }
        _ = sd_bus_message_open_container(reply, CChar(UInt8(ascii: "a")), "a{sv}")
        for entry in ids.compactMap({ id in state.queue.first { $0.id == id } }) {
            appendMetadata(reply, state.metadata(for: entry))
        }
        _ = sd_bus_message_close_container(reply)
        return sd_bus_send(nil, reply, nil)
    }

    // MARK: Properties (bus thread)

    private func get(
        _ interface: String, _ property: String, _ reply: OpaquePointer, _ error: UnsafeMutablePointer<sd_bus_error>?
    ) -> Int32 {
        let state = controller.mprisState()
        let snapshot = state.snapshot
        switch property {
        case "CanQuit", "HasTrackList", "CanControl", "CanEditTracks": return append(reply, bool: true)
        case "CanRaise", "CanSetFullscreen", "Fullscreen": return append(reply, bool: false)
        case "Shuffle": return append(reply, bool: snapshot.shuffle)
        case "Identity": return append(reply, string: "QueuePlayer")
        case "SupportedUriSchemes": return appendStrings(reply, ["file", "http", "https"])
        case "SupportedMimeTypes": return appendStrings(reply, ["audio/mpeg"])
        case "PlaybackStatus": return append(reply, string: snapshot.status.rawValue)
        case "LoopStatus": return append(reply, string: snapshot.loop.rawValue)
        case "Rate", "MinimumRate", "MaximumRate": return append(reply, double: 1)
        case "Metadata":
            appendMetadata(reply, state.metadata)
            return 0
        case "Volume": return append(reply, double: snapshot.volume)
        case "Position": return append(reply, int64: Int64(snapshot.position * 1e6))
        case "CanGoNext": return append(reply, bool: snapshot.hasNext)
        case "CanGoPrevious", "CanPause", "CanPlay": return append(reply, bool: state.hasItem)
        case "CanSeek": return append(reply, bool: state.canSeek)
        case "Tracks":
            return appendPaths(reply, state.queue.map { MPRISState.trackPath($0.id) })
        default:
            return sd_bus_error_set(error, "org.freedesktop.DBus.Error.UnknownProperty", "no property \(property)")
        }
    }

    private func set(
        _ property: String, _ value: OpaquePointer, _ error: UnsafeMutablePointer<sd_bus_error>?
    )
        -> Int32
    {
        switch property {
        case "Volume":
            var level = 0.0
            _ = sd_bus_message_read_basic(value, CChar(UInt8(ascii: "d")), &level)
            _ = controller.execute(.volume(level, relative: false), id: nil)
        case "Rate":
            var rate = 1.0
            _ = sd_bus_message_read_basic(value, CChar(UInt8(ascii: "d")), &rate)
            _ = controller.execute(rate == 0 ? .pause : .play, id: nil)
        case "LoopStatus":
            let name = readString(value, type: "s")
            guard let status = LoopStatus(rawValue: name) else {
                return sd_bus_error_set(error, Self.errorName, "LoopStatus \(name): give None, Track or Playlist")
            }
            _ = controller.execute(.loop(status), id: nil)
        case "Shuffle":
            var shuffle: Int32 = 0
            _ = sd_bus_message_read_basic(value, CChar(UInt8(ascii: "b")), &shuffle)
            _ = controller.execute(.shuffle(shuffle == 0 ? .off : .on), id: nil)
        default:
            return sd_bus_error_set(error, "org.freedesktop.DBus.Error.PropertyReadOnly", "\(property) is read-only")
        }
        return 0
    }

    // MARK: Reading and writing values

    private func readInt64(_ message: OpaquePointer) -> Int64 {
        var value: Int64 = 0
        _ = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "x")), &value)
        return value
    }

    private func readString(_ message: OpaquePointer, type: Character) -> String {
        var value: UnsafePointer<CChar>?
        _ = sd_bus_message_read_basic(message, CChar(type.asciiValue!), &value)
        return value.map { String(cString: $0) } ?? ""
    }
}

// Appending values to sd-bus messages: strings and object paths are passed as the C string itself, numbers by
// address, booleans as 32-bit integers (D-Bus `b` is 4 bytes).
@discardableResult
private func append(_ message: OpaquePointer, string: String) -> Int32 {
    string.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
}

@discardableResult
private func append(_ message: OpaquePointer, path: String) -> Int32 {
    path.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "o")), $0) }
}

@discardableResult
private func append(_ message: OpaquePointer, int64: Int64) -> Int32 {
    var value = int64
    return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "x")), &value)
}

@discardableResult
private func append(_ message: OpaquePointer, double: Double) -> Int32 {
    var value = double
    return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "d")), &value)
}

@discardableResult
private func append(_ message: OpaquePointer, bool: Bool) -> Int32 {
    var value: Int32 = bool ? 1 : 0
    return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &value)
}

@discardableResult
private func appendStrings(_ message: OpaquePointer, _ strings: [String]) -> Int32 {
    _ = sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "s")
    for string in strings { append(message, string: string) }
    return sd_bus_message_close_container(message)
}

@discardableResult
private func appendPaths(_ message: OpaquePointer, _ paths: [String]) -> Int32 {
    _ = sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "o")
    for path in paths { append(message, path: path) }
    return sd_bus_message_close_container(message)
}

/// An `a{sv}` dictionary.
private func appendMetadata(_ message: OpaquePointer, _ fields: [(String, MPRISState.Value)]) {
    _ = sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "{sv}")
    for (key, value) in fields {
        _ = sd_bus_message_open_container(message, CChar(UInt8(ascii: "e")), "sv")
        append(message, string: key)
        switch value {
        case .objectPath(let path):
            _ = sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "o")
            append(message, path: path)
        case .int64(let number):
            _ = sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "x")
            append(message, int64: number)
        case .string(let string):
            _ = sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "s")
            append(message, string: string)
        case .strings(let strings):
            _ = sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "as")
            appendStrings(message, strings)
        }
        _ = sd_bus_message_close_container(message)
        _ = sd_bus_message_close_container(message)
    }
    _ = sd_bus_message_close_container(message)
}

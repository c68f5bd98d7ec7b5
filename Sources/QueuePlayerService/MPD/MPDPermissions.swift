import Synchronization

/// What an MPD client may do, as MPD's permissions say it: `read` (status, the queue, the music folder), `add`
/// (queue songs), `player` (play, pause, seek, volume, edit the queue), `control` (stored playlists; implies
/// `player`), `admin`.
package struct MPDPermissions: OptionSet, Sendable, Hashable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }

    package static let read = Self(rawValue: 1)
    package static let add = Self(rawValue: 2)
    package static let player = Self(rawValue: 4)
    package static let control = Self(rawValue: 8)
    package static let admin = Self(rawValue: 16)
    package static let all: Self = [.read, .add, .player, .control, .admin]

    private static let names: [(String, Self)] = [
        ("read", .read), ("add", .add), ("player", .player), ("control", .control), ("admin", .admin),
    ]

    /// Reads a comma-separated list of names, as MPD's configuration gives it (`read,add,control`); `control`
    /// implies `player`, as in MPD. Throws naming an unknown one.
    package init(parsing text: String) throws(MPDError) {
        var permissions: Self = []
        for name in text.split(separator: ",") where !name.isEmpty {
            guard let permission = Self.names.first(where: { $0.0 == name })?.1 else {
                throw MPDError(
                    .argument,
                    "unknown permission \"\(name)\"; give read, add, player, control or admin, comma-separated")
            }
            permissions.insert(permission)
        }
        if permissions.contains(.control) { permissions.insert(.player) }
        self = permissions
    }
}

/// Who may do what: the permissions each password gives, and those of a client that gave none. As MPD: without any
/// password, a client may do everything; with one, nothing until it gives a password, unless default permissions are
/// set.
package struct MPDAccess: Sendable {
    package var passwords: [String: MPDPermissions]
    package var defaultPermissions: MPDPermissions

    /// Access from `--mpd-password PASSWORD@PERMISSIONS` values and `--mpd-default-permissions`; throws naming a
    /// value without `@` or with an unknown permission.
    package init(passwords: [String], defaultPermissions: String?) throws(MPDError) {
        var table: [String: MPDPermissions] = [:]
        for entry in passwords {
            guard let at = entry.lastIndex(of: "@") else {
                throw MPDError(.argument, "'@' not found: give PASSWORD@PERMISSIONS, such as secret@read,add,control")
            }
            table[String(entry[..<at])] = try MPDPermissions(parsing: String(entry[entry.index(after: at)...]))
        }
        self.passwords = table
        self.defaultPermissions =
            try defaultPermissions.map { text throws(MPDError) in
                try MPDPermissions(parsing: text)
            } ?? (table.isEmpty ? .all : [])
    }

    private init(table: [String: MPDPermissions], defaultPermissions: MPDPermissions) {
        passwords = table
        self.defaultPermissions = defaultPermissions
    }

    /// Everything to everyone: no password.
    package static let open = MPDAccess(table: [:], defaultPermissions: .all)
}

/// One connection's permissions, which `password` changes. Threading: any thread.
package final class MPDClientPermissions: Sendable {
    private let granted: Mutex<MPDPermissions>

    package init(_ granted: MPDPermissions) { self.granted = Mutex(granted) }

    package var current: MPDPermissions { granted.withLock { $0 } }

    /// Gives the connection `permissions`.
    package func grant(_ permissions: MPDPermissions) { granted.withLock { $0 = permissions } }
}

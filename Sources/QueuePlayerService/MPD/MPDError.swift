/// An error answered to an MPD client as MPD answers it: `ACK [CODE@INDEX] {COMMAND} MESSAGE`, where INDEX is the
/// command's place in a command list (0 outside one) and COMMAND the command's name (empty when the line could not be
/// read as a command).
package struct MPDError: Error, Equatable, Sendable {
    /// MPD's `enum ack` (its `src/protocol/Ack.hxx`): what kind of failure, which clients act on.
    package enum Code: Int, Sendable {
        case notList = 1
        case argument = 2
        case password = 3
        case permission = 4
        case unknown = 5
        case noExist = 50
        case playlistMax = 51
        case system = 52
        case playlistLoad = 53
        case updateAlready = 54
        case playerSync = 55
        case exist = 56
    }

    package var code: Code
    /// The command's name as MPD prints it in braces; set by the session when the command is known.
    package var command: String
    package var message: String
    /// True when the connection is closed after the error is answered: a line that is not a command at all.
    package var closesConnection: Bool

    /// An error of `code` saying `message`, for `command` (empty until the session names it).
    package init(_ code: Code, _ message: String, command: String = "", closesConnection: Bool = false) {
        self.code = code
        self.message = message
        self.command = command
        self.closesConnection = closesConnection
    }

    /// The `ACK` line, newline included, for the command at `index` of its list.
    package func line(index: Int) -> String {
        "ACK [\(code.rawValue)@\(index)] {\(command)} \(message)\n"
    }
}

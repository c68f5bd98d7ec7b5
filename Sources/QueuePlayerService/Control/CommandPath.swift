import Synchronization

/// The one path every front end's commands take: one turn at a time, each carried out, told and saved before the
/// next begins.
///
/// Threading: any thread. ``take(_:)`` blocks its caller while another command has the turn.
package final class CommandPath: Sendable {
    /// The points of a command where another front end's command could come between, in the order a command
    /// passes them.
    package enum Point: Sendable, Equatable {
        /// Its files are checked, and it asks for the turn.
        case waiting
        /// It has the turn and is carried out on the player; it is not yet saved or told.
        case carriedOut
    }

    private let turn = Mutex(())
    private let observer: (@Sendable (Point) -> Void)?

    /// A path; `observer` is called on the command's thread at each ``Point`` (tests use it to hold a command
    /// there and send another, which is how they interleave front ends deterministically).
    package init(observer: (@Sendable (Point) -> Void)? = nil) {
        self.observer = observer
    }

    /// Runs `body` when the turn comes, and returns what it returns.
    func take<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        observer?(.waiting)
        return try turn.withLock { _ throws(Failure) -> Result in try body() }
    }

    /// Tells the observer that the command whose turn it is has reached `point`.
    func reached(_ point: Point) {
        observer?(point)
    }
}

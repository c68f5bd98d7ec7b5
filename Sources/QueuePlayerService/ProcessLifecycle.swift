import Glibc
import Logging
import QueuePlayer
import ServiceLifecycle
import UnixSignals

/// Flags the process backgrounded or active, from outside:
/// - SIGUSR1 enters the background and SIGUSR2 the foreground (until the control socket has its own commands);
/// - job control: the process is backgrounded while its terminal's foreground process group is another (started
///   with `&`, or moved with Ctrl-Z and `bg`), and active again after `fg`; the SIGCONT that `fg` and `bg` send is
///   when this is looked at. Only changes count, so `--background` or SIGUSR1 in a foreground terminal stay in
///   force until the terminal changes hands.
///
/// SIGTTOU is ignored, so that a backgrounded process is never stopped for writing to its terminal (it does not
/// draw its status line there anyway).
package final class ProcessLifecycle: Service {
    private let application: Application
    private let terminal: Int32?
    private let logger: Logger

    /// `terminal` is the descriptor of the controlling terminal the status line goes to, or nil when detached.
    package init(application: Application, terminal: Int32?, logger: Logger) {
        self.application = application
        self.terminal = terminal
        self.logger = logger
    }

    /// True when `terminal` is attached and this process group holds its foreground.
    package static func ownsTerminal(_ terminal: Int32?) -> Bool {
        guard let terminal else { return false }
        return tcgetpgrp(terminal) == getpgrp()
    }

    package func run() async throws {
        signal(SIGTTOU, SIG_IGN)
        let signals = await UnixSignalsSequence(trapping: .sigusr1, .sigusr2, .sigcont)
        // The shell sends SIGCONT whenever it hands the terminal over (`fg`) or lets a stopped job run on (`bg`),
        // so that is when ownership is looked at again.
        await cancelWhenGracefulShutdown {
            var ownedTerminal = Self.ownsTerminal(self.terminal)
            for await signal in signals {
                switch signal {
                case .sigusr1: self.application.enterBackground()
                case .sigusr2: self.application.enterForeground()
                default:
                    let owns = Self.ownsTerminal(self.terminal)
                    guard self.terminal != nil, owns != ownedTerminal else { continue }
                    ownedTerminal = owns
                    self.logger.debug("job control: \(owns ? "in" : "not in") the terminal's foreground")
                    owns ? self.application.enterForeground() : self.application.enterBackground()
                }
            }
        }
    }
}

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
///
/// The signals are trapped by `trapSignals()`, before anything outside can know the process is there (the control
/// socket): a SIGUSR1 or SIGUSR2 that arrived before the trap would take its default action and end the daemon.
/// Signals that arrive between the trap and `run()` wait in the sequence.
package final class ProcessLifecycle: Service {
    private let application: Application
    private let terminal: Int32?
    private let signals: UnixSignalsSequence
    private let logger: Logger

    /// `terminal` is the descriptor of the controlling terminal the status line goes to, or nil when detached;
    /// `signals` is what `trapSignals()` returned.
    package init(application: Application, terminal: Int32?, signals: UnixSignalsSequence, logger: Logger) {
        self.application = application
        self.terminal = terminal
        self.signals = signals
        self.logger = logger
    }

    /// Ignores SIGTTOU and traps SIGUSR1, SIGUSR2 and SIGCONT; once this returns, none of them can end the process.
    /// Call it once per process, before the control socket serves.
    package static func trapSignals() async -> UnixSignalsSequence {
        signal(SIGTTOU, SIG_IGN)
        return await UnixSignalsSequence(trapping: .sigusr1, .sigusr2, .sigcont)
    }

    /// True when `terminal` is attached and this process group holds its foreground.
    package static func ownsTerminal(_ terminal: Int32?) -> Bool {
        guard let terminal else { return false }
        return tcgetpgrp(terminal) == getpgrp()
    }

    package func run() async throws {
        let signals = self.signals
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

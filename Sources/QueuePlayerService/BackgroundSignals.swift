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
/// The signals are blocked in every thread from the start (`blockHandledSignals()`), and trapped by `trapSignals()`;
/// one that arrives before the trap waits, pending, until the sequence reads it.
package final class BackgroundSignals: Service {
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

    /// Ignores SIGTTOU and traps SIGUSR1, SIGUSR2 and SIGCONT. Call it once per process.
    package static func trapSignals() async -> UnixSignalsSequence {
        signal(SIGTTOU, SIG_IGN)
        return await UnixSignalsSequence(trapping: .sigusr1, .sigusr2, .sigcont)
    }

    /// The signals the daemon receives through signal sequences: SIGUSR1, SIGUSR2 and SIGCONT (``trapSignals()``), and
    /// the service group's SIGTERM and SIGINT.
    package static let handledSignals: [Int32] = [SIGUSR1, SIGUSR2, SIGCONT, SIGTERM, SIGINT]

    /// Blocks ``handledSignals`` in the calling thread; call it first thing on the main thread, so that every thread
    /// inherits the mask.
    ///
    /// libdispatch reads a trapped signal from a signalfd, and blocks it only in its own threads: a thread that did
    /// not block it could take the signal first and spend it on a handler that does nothing (a daemon under test once
    /// lost both a SIGCONT and the SIGTERM after it). Blocked everywhere, a signal waits until its sequence reads it,
    /// so one sent before the sequences exist (as soon as the control socket accepts a connection) is handled then,
    /// instead of ending the process (SIGUSR1's and SIGUSR2's default action).
    package static func blockHandledSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in handledSignals { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
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

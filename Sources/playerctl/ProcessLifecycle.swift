import Glibc
import Logging
import QueuePlayer
import ServiceLifecycle
import UnixSignals

/// Flags the process backgrounded or active, from outside:
/// - SIGUSR1 enters the background and SIGUSR2 the foreground (until the control socket has its own commands);
/// - job control: the process is backgrounded while its terminal's foreground process group is another (started
///   with `&`, or moved with Ctrl-Z and `bg`), and active again after `fg`. Only changes count, so `--background`
///   or SIGUSR1 in a foreground terminal stay in force until the terminal changes hands.
///
/// SIGTTOU is ignored, so that a backgrounded process is never stopped for writing to its terminal (it does not
/// draw its status line there anyway).
final class ProcessLifecycle: Service {
    private let application: Application
    private let terminal: Int32?
    private let logger: Logger

    /// `terminal` is the descriptor of the controlling terminal the status line goes to, or nil when detached.
    init(application: Application, terminal: Int32?, logger: Logger) {
        self.application = application
        self.terminal = terminal
        self.logger = logger
    }

    /// True when `terminal` is attached and this process group holds its foreground.
    static func ownsTerminal(_ terminal: Int32?) -> Bool {
        guard let terminal else { return false }
        return tcgetpgrp(terminal) == getpgrp()
    }

    func run() async throws {
        signal(SIGTTOU, SIG_IGN)
        let signals = await UnixSignalsSequence(trapping: .sigusr1, .sigusr2, .sigcont)
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    for await signal in signals {
                        switch signal {
                        case .sigusr1: self.application.enterBackground()
                        case .sigusr2: self.application.enterForeground()
                        default: break  // SIGCONT: the poll notices the terminal's new owner.
                        }
                    }
                }
                await self.followJobControl()
            }
        }
    }

    /// Polls the terminal's foreground process group and turns each change into a transition.
    private func followJobControl() async {
        guard terminal != nil else { return }
        var ownedTerminal = Self.ownsTerminal(terminal)
        while !Task.isCancelled {
            let owns = Self.ownsTerminal(terminal)
            if owns != ownedTerminal {
                ownedTerminal = owns
                logger.debug("job control: \(owns ? "in" : "not in") the terminal's foreground")
                owns ? application.enterForeground() : application.enterBackground()
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }
}

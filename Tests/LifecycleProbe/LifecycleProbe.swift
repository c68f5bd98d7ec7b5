import Dispatch
import Logging
import QueuePlayer
import Synchronization

/// A child process for the lifecycle tests: enters the background with one background task and a short budget,
/// then either ends the task in its expiration handler or never ends it (and is terminated by the watchdog).
///
/// Usage: LifecycleProbe BUDGET MARGIN end|overrun
@main
struct LifecycleProbe {
    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        guard arguments.count == 3, let budget = Double(arguments.first!),
            let margin = Double(arguments.dropFirst().first!), let mode = arguments.last,
            ["end", "overrun"].contains(mode)
        else {
            print("usage: LifecycleProbe BUDGET MARGIN end|overrun")
            return
        }
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        let logger = Logger(label: "probe")
        let application = Application.shared
        application.configure(
            manifest: AppManifest(),
            backgroundTime: BackgroundTimeConfiguration(budget: budget, expirationMargin: margin),
            logger: logger)
        application.enterBackground()
        let identifier = Mutex(BackgroundTaskIdentifier.invalid)
        let task = application.beginBackgroundTask(name: "probe export") {
            logger.info("expiration handler called")
            if mode == "end" { application.endBackgroundTask(identifier.withLock { $0 }) }
        }
        identifier.withLock { $0 = task }
        try? await Task.sleep(for: .seconds(budget + 0.5))
        logger.info("still running after the budget")
    }
}

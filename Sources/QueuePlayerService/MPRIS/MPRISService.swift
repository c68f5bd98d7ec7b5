import PosixThreads
import QueuePlayer
import ServiceLifecycle

/// Runs the MPRIS object beside the daemon: the bus on a thread of its own, fed with the controller's snapshots
/// until graceful shutdown.
package final class MPRISService: Service {
    private let bus: MPRISBus
    private let controller: PlayerController

    package init(bus: MPRISBus, controller: PlayerController) {
        self.bus = bus
        self.controller = controller
    }

    package func run() async {
        let bus = bus
        PosixThread.start(name: "QP bus") { bus.run() }
        await cancelWhenGracefulShutdown {
            for await state in self.controller.mprisStates() {
                bus.note(state)
            }
        }
        bus.stop()
    }
}

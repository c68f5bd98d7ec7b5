import NIOPosix

/// The event loop that control connections use, the daemon's and the client's alike.
///
/// One thread: a control socket carries a few requests a second, so a loop per core (NIO's singleton group) would
/// only add threads, to a client verb's start and to the daemon's memory. Like NIO's singleton, it lives as long as
/// the process and is never shut down.
package enum ControlEventLoop {
    /// The group of one loop; any thread may use it, and blocking on its futures is allowed anywhere but on it.
    package static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
}

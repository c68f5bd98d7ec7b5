import Dispatch

/// The clock an ``Application`` counts background time on and runs its two timers with (the expiration handlers,
/// then the watchdog). A program uses real time; a test moves a manual clock on, so that a budget passes in one call
/// and nothing sleeps.
package protocol LifecycleClock: Sendable {
    /// The time now, from an origin fixed for the clock's life.
    var now: Duration { get }

    /// Runs `action` once, after `delay` has passed on this clock. Any thread.
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void)
}

/// Real time (`ContinuousClock`, which goes on while the machine sleeps, as iOS's background time does); the timers
/// run on one serial queue of their own.
struct ContinuousLifecycleClock: LifecycleClock {
    private let origin = ContinuousClock.now
    private let timerQueue = DispatchQueue(label: "queueplayer.lifecycle")

    var now: Duration { origin.duration(to: .now) }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) {
        timerQueue.asyncAfter(deadline: .now() + Application.seconds(max(delay, .zero)), execute: action)
    }
}

import Dispatch
import Foundation
import Logging
import Synchronization
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// Records what `terminate` was asked to do instead of exiting the test runner.
final class TerminationRecorder: Sendable {
    private let statuses = Mutex<[Int32]>([])
    var recorded: [Int32] { statuses.withLock { $0 } }
    func record(_ status: Int32) { statuses.withLock { $0.append(status) } }
}

/// Waits until `states` (an ``Application/states()`` stream) reports `wanted`; false if the stream ends first.
func reaches(_ wanted: ApplicationState, in states: inout AsyncStream<ApplicationState>.Iterator) async -> Bool {
    while let state = await states.next() {
        if state == wanted { return true }
    }
    return false
}

/// Moves an application between the foreground and the background over and over on a thread of its own, until
/// stopped.
final class Transitions: Sendable {
    private let stopped = Atomic<Bool>(false)

    init(of application: Application) {
        Thread.detachNewThread { [self] in
            while !stopped.load(ordering: .acquiring) {
                application.enterBackground()
                application.enterForeground()
            }
        }
    }

    /// Stops the transitions after the one under way (not waited for: it may be the one that hangs).
    func stop() {
        stopped.store(true, ordering: .releasing)
    }
}

@Suite("Application: states, transition notifications, background tasks", .tier(.deterministic))
struct ApplicationTests {
    let log = CapturedLog()
    let terminations = TerminationRecorder()
    /// The background time passes only when a test moves this on.
    let clock = ManualLifecycleClock()

    func application(
        audio: Bool = false, budget: Double = 600, margin: Double = 5
    ) -> Application {
        Application(
            manifest: AppManifest(backgroundModes: audio ? [.audio] : []),
            backgroundTime: BackgroundTimeConfiguration(budget: budget, expirationMargin: margin), logger: log.logger,
            clock: clock, terminate: { [terminations] in terminations.record($0) })
    }

    @Test("leaving and returning post the four notifications in UIKit's order, to observers and to streams")
    func transitionOrder() async {
        let application = application(audio: true)
        let observed = Collected<LifecycleNotification>()
        application.addObserver(queue: observed.queue) { observed.append($0) }
        let stream = application.notifications()
        #expect(application.applicationState == .active)

        application.enterBackground()
        #expect(application.applicationState == .background)
        application.enterBackground()  // already there: nothing posted
        application.enterForeground()
        #expect(application.applicationState == .active)
        application.enterForeground()  // already there: nothing posted

        let expected: [LifecycleNotification] = [
            .willResignActive, .didEnterBackground, .willEnterForeground, .didBecomeActive,
        ]
        #expect(observed.values == expected)
        var streamed: [LifecycleNotification] = []
        for await notification in stream {
            streamed.append(notification)
            if streamed.count == expected.count { break }
        }
        #expect(streamed == expected)
    }

    @Test("without the audio mode, the background is suspended once no task runs; with it, it is not")
    func suspension() {
        let plain = application()
        plain.enterBackground()
        #expect(plain.applicationState == .suspended)

        let busy = application()
        busy.enterForeground()
        let task = busy.beginBackgroundTask(name: "finish upload")
        busy.enterBackground()
        #expect(busy.applicationState == .background)
        busy.endBackgroundTask(task)
        #expect(busy.applicationState == .suspended)
        busy.enterForeground()
        #expect(busy.applicationState == .active)

        let audio = application(audio: true)
        audio.enterBackground()
        #expect(audio.applicationState == .background)
    }

    @Test("backgroundTimeRemaining is the largest finite Double in the foreground and counts down in the background")
    func timeRemaining() {
        let application = application(budget: 30)
        #expect(application.backgroundTimeRemaining == .greatestFiniteMagnitude)
        clock.advance(by: .seconds(100))
        application.enterBackground()
        #expect(application.backgroundTimeRemaining == 30, "the budget counts from the entry")
        clock.advance(by: .milliseconds(50))
        #expect(abs(application.backgroundTimeRemaining - 29.95) < 1e-9)
        clock.advance(by: .seconds(40))
        #expect(application.backgroundTimeRemaining == 0)
        application.enterForeground()
        #expect(application.backgroundTimeRemaining == .greatestFiniteMagnitude)
    }

    @Test("every begin pairs with one end; ending twice or an unknown id is a logged error, not a crash")
    func pairing() {
        let application = application()
        let first = application.beginBackgroundTask(name: "first")
        let second = application.beginBackgroundTask(name: "second")
        #expect(first != .invalid && second != .invalid && first != second)
        #expect(application.runningBackgroundTasks == ["first", "second"])
        application.endBackgroundTask(first)
        #expect(application.runningBackgroundTasks == ["second"])
        application.endBackgroundTask(first)
        application.endBackgroundTask(BackgroundTaskIdentifier(rawValue: 999))
        application.endBackgroundTask(.invalid)
        #expect(application.runningBackgroundTasks == ["second"])
        let errors = log.messages(at: .error)
        #expect(errors.count == 3)
        #expect(errors.first?.contains("endBackgroundTask(#\(first.rawValue))") == true)
        #expect(errors.allSatisfy { $0.contains("no such task is running") })
        #expect(log.all.contains { $0.contains("background task 'first'") && $0.contains("ended after") })
    }

    @Test("the expiration handler runs the margin before the end; a task ended there does not terminate")
    func expiry() {
        let application = application(budget: 0.4, margin: 0.3)
        let handled = Collected<Duration>()
        let task = Mutex(BackgroundTaskIdentifier.invalid)
        application.enterBackground()
        let identifier = application.beginBackgroundTask(name: "upload") { [application, clock] in
            handled.append(clock.now)
            application.endBackgroundTask(task.withLock { $0 })
        }
        task.withLock { $0 = identifier }
        clock.advance(by: .milliseconds(99))
        #expect(handled.values.isEmpty, "the handler ran before the margin")
        #expect(application.runningBackgroundTasks == ["upload"])
        clock.advance(by: .seconds(1))
        let at = handled.values.map(Application.seconds)
        #expect(at.count == 1 && abs(at[0] - 0.1) < 1e-9, "the handler runs once, the margin before the end: \(at)")
        #expect(terminations.recorded.isEmpty)
        #expect(application.runningBackgroundTasks.isEmpty)
    }

    @Test("a task still running when the time is spent terminates with the watchdog status, naming the task")
    func overrun() {
        let application = application(budget: 0.2, margin: 0.1)
        application.enterBackground()
        _ = application.beginBackgroundTask(name: "stuck export")
        clock.advance(by: .milliseconds(199))
        #expect(terminations.recorded.isEmpty, "terminated before the time was spent")
        clock.advance(by: .milliseconds(2))
        #expect(terminations.recorded == [Application.watchdogExitStatus])
        #expect(log.messages(at: .critical).contains { $0.contains("'stuck export'") })
    }

    @Test("no time is granted once the background time is spent: the identifier is invalid")
    func invalidWhenSpent() {
        let application = application(budget: 0.05, margin: 0)
        application.enterBackground()
        clock.advance(by: .milliseconds(51))
        #expect(application.backgroundTimeRemaining == 0)
        #expect(application.beginBackgroundTask(name: "too late") == .invalid)
        application.enterForeground()
        application.enterBackground()
        #expect(application.beginBackgroundTask(name: "next stay") != .invalid)
    }

    @Test("work registered for entering the background runs each time, not only the first (the seeds' bug)")
    func workEachTimeInBackground() async {
        let application = application(budget: 0.3, margin: 0.1)
        let (runs, run) = AsyncStream.makeStream(of: Int.self)
        var ran = runs.makeAsyncIterator()
        var states = application.states().makeAsyncIterator()
        let token = application.performWhenEnteringBackground(named: "save state") { run.yield(1) }
        for _ in 1...3 {
            application.enterBackground()
            #expect(await ran.next() == 1)
            // Its background task ended once the work returned: with nothing left to run, the process suspends.
            #expect(await reaches(.suspended, in: &states))
            // Stay past the whole budget: a task begun once would be long expired by the next time.
            clock.advance(by: .milliseconds(350))
            application.enterForeground()
        }
        application.removeObserver(token)
        application.enterBackground()
        #expect(application.runningBackgroundTasks.isEmpty, "removed work began a task")
        #expect(application.applicationState == .suspended)
        run.finish()
        #expect(await ran.next() == nil, "the work ran more than three times")
        #expect(terminations.recorded.isEmpty)
    }

    @Test("work that outlives the time is cancelled and its task ended, so the process is not terminated")
    func backgroundWorkExpires() async {
        let application = application(budget: 0.3, margin: 0.2)
        let (cancellations, cancelled) = AsyncStream.makeStream(of: Bool.self)
        // Work that never ends of itself: it waits on a stream nothing is ever sent to, which ends only when the
        // work's task is cancelled.
        let (nothing, keepsOpen) = AsyncStream.makeStream(of: Never.self)
        application.performWhenEnteringBackground(named: "slow work") {
            for await _ in nothing {}
            cancelled.yield(Task.isCancelled)
            keepsOpen.finish()
        }
        application.enterBackground()
        #expect(application.runningBackgroundTasks == ["slow work"])
        clock.advance(by: .milliseconds(100))
        #expect(application.runningBackgroundTasks.isEmpty, "the expiration did not end the work's task")
        var told = cancellations.makeAsyncIterator()
        #expect(await told.next() == true, "the work was not cancelled")
        clock.advance(by: .milliseconds(200))
        #expect(terminations.recorded.isEmpty)
    }
}

@Suite(
    "Background playback policy: pause without the audio mode, play on with it", .tier(.deterministic),
    // The waits below end on the player's own changes; a change that never comes fails the test here.
    .timeLimit(.minutes(1)))
struct BackgroundPolicyTests {
    func player(audio: Bool) -> (QueuePlayer, Application) {
        let application = Application(
            manifest: AppManifest(backgroundModes: audio ? [.audio] : []), logger: quietLogger, terminate: { _ in })
        let item = PlayerItem(url: Fixtures.mp3("stereo-44k-5s"))
        let player = QueuePlayer(
            items: [item], sink: NullSink(pacing: .realTime), logger: quietLogger, application: application)
        return (player, application)
    }

    /// Waits until the player's `property` has a value `condition` accepts; the value it has now counts.
    func until<Value: Equatable & Sendable>(
        _ player: QueuePlayer, _ property: KeyPath<QueuePlayer, Value> & Sendable, _ condition: (Value) -> Bool
    ) async -> Bool {
        for await value in player.values(of: property) where condition(value) { return true }
        return false
    }

    /// The times a 10 ms periodic time observer is told from now on. They wait in the stream for the test: on a busy
    /// machine the test may get its turn only after the item has played to its end, and then no time comes later.
    func times(of player: QueuePlayer) -> (times: AsyncStream<MediaTime>, observer: ObserverToken) {
        let (times, tell) = AsyncStream.makeStream(of: MediaTime.self)
        let observer = player.addPeriodicTimeObserver(
            forInterval: MediaTime(value: 10, timescale: 1000), queue: .global()
        ) { tell.yield($0) }
        return (times, observer)
    }

    /// Waits until `count` of `times` are later than `time`.
    func heard(_ times: AsyncStream<MediaTime>, past time: MediaTime, ticks count: Int = 1) async -> Bool {
        var later = 0
        for await heard in times where heard > time {
            later += 1
            if later == count { return true }
        }
        return false
    }

    @Test("without the audio mode, entering the background pauses; the player stays paused on return")
    func pausesWithoutAudio() async throws {
        // Audio time moves only as the test renders, so "nothing is heard" is the stream standing corked.
        let application = Application(
            manifest: AppManifest(backgroundModes: []), logger: quietLogger, terminate: { _ in })
        let sink = SteppedSink()
        let player = QueuePlayer(
            items: [PlayerItem(url: Fixtures.mp3("stereo-44k-5s"))], sink: sink, logger: quietLogger,
            application: application)
        let policy = try #require(player.registry.withLock { $0.backgroundPolicy })
        let (ticks, tick) = AsyncStream.makeStream(of: MediaTime.self)
        let observer = player.addPeriodicTimeObserver(
            forInterval: MediaTime(value: 10, timescale: 1000), queue: .global()
        ) { tick.yield($0) }
        player.play()
        _ = try sink.renderAll(frames: 4410)
        let heard = MediaTime(value: 4410, timescale: 44100)
        // The event thread tells the item's start, and its times, once their frames are heard: the time counts from
        // the start told.
        for await time in ticks where time >= MediaTime(value: 90, timescale: 1000) { break }
        player.removeObserver(observer)
        application.enterBackground()
        policy.waitUntilHandled()
        #expect(player.rate == 0)
        #expect(player.timeControlStatus == .paused)
        #expect(sink.streamIsPaused == true, "the output is corked")
        #expect(player.currentTime() == heard, "the time stands where the sound stopped")
        application.enterForeground()
        policy.waitUntilHandled()
        #expect(player.rate == 0, "back in the foreground, the player stays paused")
        #expect(sink.streamIsPaused == true)
        #expect(player.currentTime() == heard)
    }

    @Test("with resumesAfterBackground, the player plays again on return")
    func resumesWhenAsked() async throws {
        let (player, application) = player(audio: false)
        let policy = try #require(player.registry.withLock { $0.backgroundPolicy })
        player.resumesAfterBackground = true
        player.play()
        application.enterBackground()
        policy.waitUntilHandled()
        #expect(player.rate == 0)
        let pausedAt = player.currentTime()
        let (times, observer) = times(of: player)
        defer { player.removeObserver(observer) }
        application.enterForeground()
        #expect(await until(player, \.rate) { $0 == 1 })
        #expect(await heard(times, past: pausedAt), "the item's time goes on from where it was paused")
    }

    @Test("with the audio mode, playback and the time observer go on in the background")
    func playsOnWithAudio() async throws {
        let (player, application) = player(audio: true)
        let policy = try #require(player.registry.withLock { $0.backgroundPolicy })
        let (times, observer) = times(of: player)
        defer { player.removeObserver(observer) }
        player.play()
        application.enterBackground()
        policy.waitUntilHandled()
        // Ten ticks of the item's time after the move to the background: it is heard on there.
        #expect(await heard(times, past: player.currentTime(), ticks: 10))
        #expect(player.rate == 1)
        #expect(application.applicationState == .background)
    }
}

/// Alone under a sanitizer: hundreds of cancellations, each on threads of their own, keep a core busy there, and
/// beside them timing tests of the engine lost their races.
@Suite("Application: streams let go under load", .tier(.deterministic, sanitized: .alone))
struct ApplicationStreamTests {
    let applications = ApplicationTests()

    @Test("a stream whose consumer is cancelled while transitions are posted is let go at once, 100 times over")
    func cancelledStreamConsumer() async {
        // Cancelling the consumer's task ends its stream under the Swift runtime's lock on that task, and the end
        // removes the stream under the application's lock; a transition that yielded to the stream under that
        // lock needed the task's, and the two waited for each other (here, by the fourth round).
        let application = applications.application(audio: true)
        let transitions = Transitions(of: application)
        defer { transitions.stop() }
        for round in 0..<100 {
            let stream = application.notifications()
            let (told, heard) = AsyncStream.makeStream(of: Void.self)
            let consumer = Task {
                for await _ in stream { heard.yield() }
            }
            // A notification has arrived: transitions are being posted as the cancellation comes.
            for await _ in told { break }
            guard await cancellationReturns(consumer) else {
                Issue.record("round \(round): cancelling a notification stream's consumer did not return in 10 s")
                return
            }
        }
    }
}

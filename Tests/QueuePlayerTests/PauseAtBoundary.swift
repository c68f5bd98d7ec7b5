import Foundation

@testable import QueuePlayer

/// Where the helpers below pause: a tenth of a second into the first item.
let earlyInFirstItem = MediaTime(value: 1, timescale: 10)

/// Plays `engine`, which must not be playing yet, and pauses it from a boundary time observer as `time` of its first
/// item is heard; returns once it is paused. The pause is made on the observer's queue, not by the calling test once
/// it hears of the item's start: a task of a test is next scheduled when the pool's threads are free, which under a
/// sanitizer with every suite running took seconds, and a short item had ended by then.
func playThenPause(_ engine: PlaybackEngine, at time: MediaTime = earlyInFirstItem) async {
    let (paused, pausedContinuation) = AsyncStream.makeStream(of: Void.self)
    let observer = engine.addBoundaryTimeObserver(forTimes: [time], queue: DispatchQueue(label: "pause")) {
        engine.pause()
        pausedContinuation.yield()
    }
    engine.play()
    for await _ in paused { break }
    engine.removeTimeObserver(observer)
}

/// ``playThenPause(_:at:)`` for a player.
func playThenPause(_ player: QueuePlayer, at time: MediaTime = earlyInFirstItem) async {
    await play(player, thenAt: time) { player.pause() }
}

/// Plays `player`, which must not be playing yet, and runs `action` once, from a boundary time observer on a queue of
/// its own, as `time` is heard in the item whose file is named `fileName` (in the first item heard, when nil);
/// returns once it ran. As ``playThenPause(_:at:)``, so that the command does not wait for the test's task.
func play(
    _ player: QueuePlayer, thenAt time: MediaTime = earlyInFirstItem, inFileNamed fileName: String? = nil,
    _ action: @escaping @Sendable () -> Void
) async {
    let (done, doneContinuation) = AsyncStream.makeStream(of: Void.self)
    let once = Once()
    let observer = player.addBoundaryTimeObserver(forTimes: [time], queue: DispatchQueue(label: "command")) {
        guard fileName == nil || player.currentItem?.url.lastPathComponent == fileName else { return }
        guard once.take() else { return }
        action()
        doneContinuation.finish()
    }
    player.play()
    for await _ in done {}
    player.removeTimeObserver(observer)
}

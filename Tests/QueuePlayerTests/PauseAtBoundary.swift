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
    let (paused, pausedContinuation) = AsyncStream.makeStream(of: Void.self)
    let observer = player.addBoundaryTimeObserver(forTimes: [time], queue: DispatchQueue(label: "pause")) {
        player.pause()
        pausedContinuation.yield()
    }
    player.play()
    for await _ in paused { break }
    player.removeTimeObserver(observer)
}

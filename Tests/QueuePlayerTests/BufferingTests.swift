import Dispatch
import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

/// `recording` with the first run of silence that is not in `reference` taken out, and that run's length in frames:
/// what a stall leaves in a recording, between running dry and the output pausing.
private func removingInsertedSilence(_ recording: [Float], reference: [Float]) -> ([Float], frames: Int) {
    let common = min(recording.count, reference.count)
    guard let differing = (0..<common).first(where: { recording[$0] != reference[$0] }) else { return (recording, 0) }
    let runStart = differing - differing % 2
    var runEnd = runStart
    while runEnd < recording.count, recording[runEnd] == 0 { runEnd += 1 }
    runEnd -= (runEnd - runStart) % 2
    return (Array(recording[..<runStart]) + Array(recording[runEnd...]), (runEnd - runStart) / 2)
}

/// Plays `player` until its first item has been heard to its end.
private func playToEnd(_ player: QueuePlayer) async {
    let notifications = player.notifications()
    player.play()
    for await notification in notifications {
        if case .didPlayToEndTime = notification { return }
    }
}

@Suite(
    "Buffering a remote item, as AVFoundation waits to minimize stalls", .tier(.deterministic), .timeLimit(.minutes(1)))
struct BufferingTests {
    @Test("play waits for the forward buffer, a stall is told and waited out, and nothing is lost or played twice")
    func playWaitsAndAStallIsWaitedOut() async throws {
        // 192 kbps, 24.4 KB a second: the server holds its answer at 2.4 s, past the 2 s that playing waits for.
        var route = HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("sweep-44k-4s"))))
        route.stallsAfterBytes = 60_000
        let server = try await HTTPTestServer(routes: ["/sweep.mp3": route])
        let item = PlayerItem(url: server.url("/sweep.mp3"))
        let sink = NullSink(pacing: .realTime, recordingFrames: 400_000)
        let player = QueuePlayer(items: [item], sink: sink, logger: quietLogger)
        let observers = DispatchQueue(label: "buffering observers")
        let (reasons, tellReason) = AsyncStream.makeStream(of: QueuePlayer.WaitingReason?.self)
        let reasonToken = player.observe(\.reasonForWaitingToPlay, queue: observers) { tellReason.yield($0) }
        let (notifications, tell) = AsyncStream.makeStream(of: String.self)
        let notificationToken = player.addNotificationObserver(queue: observers) { notification in
            switch notification {
            case .playbackStalled(let stalled) where stalled === item:
                // Read inside the call: the player as the stall was told.
                tell.yield(
                    "stalled \(player.timeControlStatus) \(item.isPlaybackBufferEmpty) "
                        + "\(item.isPlaybackLikelyToKeepUp) \(item.currentTime().seconds)")
            default:
                break
            }
        }
        player.play()
        var told = notifications.makeAsyncIterator()
        let stall = try #require(await told.next())
        let words = stall.split(separator: " ")
        #expect(words.prefix(4) == ["stalled", "waitingToPlayAtSpecifiedRate", "true", "false"], "\(stall)")
        // The 60,000 bytes hold 2.45 s of audio, less what libmpg123 holds back for the frame it has not finished.
        let stalledAt = try #require(words.last.flatMap { Double($0) })
        #expect(stalledAt > 2.3 && stalledAt < 2.46, "\(stall)")
        server.releaseStalledAnswers()
        var reasonsTold: [QueuePlayer.WaitingReason?] = []
        for await reason in reasons {
            reasonsTold.append(reason)
            if reason == .noItemToPlay { break }
        }
        player.removeObserver(reasonToken)
        player.removeObserver(notificationToken)
        player.pause()
        try await server.stop()
        #expect(
            reasonsTold == [.toMinimizeStalls, nil, .toMinimizeStalls, nil, .noItemToPlay],
            "waiting to play, playing, stalled, playing again, the queue's end")
        let reference = try Fixtures.referenceFloat("sweep-44k-4s")
        let (heard, silence) = removingInsertedSilence(sink.takeRecording(), reference: reference)
        #expect(sampleDifference(heard, reference) == nil, "every frame once, in order, around the stall")
        // Between running dry and the output pausing: at most one of the sink's 1,024-frame periods (1,024 in each of
        // five runs).
        #expect(silence < 2048, "\(silence) frames of silence before the stall paused the output")
    }

    @Test("a remote item's buffer properties follow its download; a local file counts as all there")
    func itemBufferProperties() async throws {
        let server = try await HTTPTestServer(
            routes: ["/join-1.mp3": HTTPTestServer.Route(body: Array(try Data(contentsOf: Fixtures.mp3("join-1"))))])
        let remote = PlayerItem(url: server.url("/join-1.mp3"))
        #expect(!remote.isPlaybackLikelyToKeepUp && remote.loadedTimeRanges.isEmpty, "nothing known before opening")
        let player = QueuePlayer(items: [remote], sink: NullSink(pacing: .unpaced), logger: quietLogger)
        await playToEnd(player)
        #expect(remote.isPlaybackLikelyToKeepUp && !remote.isPlaybackBufferEmpty)
        let loaded = try #require(remote.loadedTimeRanges.first)
        #expect(loaded.start == .zero && abs(loaded.end.seconds - remote.duration.seconds) < 0.1, "\(loaded)")
        player.pause()
        try await server.stop()

        let local = PlayerItem(url: Fixtures.mp3("join-1"))
        let localPlayer = QueuePlayer(items: [local], sink: NullSink(pacing: .unpaced), logger: quietLogger)
        await playToEnd(localPlayer)
        #expect(local.isPlaybackLikelyToKeepUp && local.isPlaybackBufferFull && !local.isPlaybackBufferEmpty)
        #expect(local.loadedTimeRanges == [MediaTimeRange(start: .zero, duration: local.duration)])
        localPlayer.pause()
    }
}

import TestSupport
import Testing

@testable import QueuePlayer

extension PulseAudioTests {
    @Test(
        "a volume change is heard within 0.1 s on PulseAudio (the server's own volume), within 0.5 s on PipeWire",
        arguments: PulseServer.Kind.allCases)
    func volumeChangeHeardPromptly(_ kind: PulseServer.Kind) async throws {
        let server = try await PulseServer(name: "volume", kind: kind)
        let recording = try await MonitorRecording(server: server)
        let engine = try playing([Fixtures.mp3("stereo-44k-5s")], on: pulseSink(server))
        var iterator = engine.events.makeAsyncIterator()
        while let name = await nextHeard(&iterator), name != "start stereo-44k-5s" {}
        await recording.waitForFurther(22_050)
        let changedAt = recording.framesSoFar
        engine.volume = 0.5
        await recording.waitForFurther(30_870)
        let samples = recording.finish()
        engine.shutdown()

        // The right channel is a steady triangle wave: its peak in each 10 ms window is the level heard then.
        let window = 441
        let peaks = stride(from: 0, to: samples.count / 2 - window, by: window).map { start in
            (start, (start..<(start + window)).map { abs(Int(samples[$0 * 2 + 1])) }.max() ?? 0)
        }
        let before = peaks.filter { $0.0 + window <= changedAt }.suffix(20).map(\.1)
        let full = try #require(before.max(), "nothing was recorded before the change")
        #expect(full > 10_000, "the item was not heard before the change (peak \(full))")
        // A quantum PipeWire's graph loses may be recorded as silence in place
        // (``PulseServer/Kind/droppedQuanta(during:)``): each can darken the two windows it overlaps.
        let darkWindowsAllowed = kind.droppedQuanta(during: recording.machineLoad).count * 2
        #expect(
            before.filter { $0 <= full * 9 / 10 }.count <= darkWindowsAllowed,
            "the level dropped before the change: \(before); \(recording.machineLoad.inWords)")
        let heardAt = try #require(
            peaks.first { $0.0 >= changedAt && $0.1 < full * 3 / 4 }?.0, "the change was never heard")
        let bound = kind == .pipeWire ? 22_050 : 4_410
        #expect(heardAt - changedAt <= bound, "heard \(heardAt - changedAt) frames after the change")
        // From then on, half the level (to within the wave's own variation from window to window).
        let after = peaks.filter { $0.0 > heardAt }.map(\.1)
        #expect(after.count > 10)
        #expect(after.allSatisfy { abs($0 - full / 2) <= full / 20 }, "levels after the change: \(after), of \(full)")
    }
}

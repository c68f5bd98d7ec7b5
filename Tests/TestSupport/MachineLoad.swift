import Foundation

/// The machine's CPU time as `/proc/stat` counts it, for a timing test to print beside a missed bound: a miss while
/// the host took the CPUs away (steal) or the machine was busy with other work is told apart from one with neither,
/// which is then the player's.
public struct MachineLoad: Sendable {
    /// Milliseconds, summed over all CPUs since boot, that the hypervisor ran something else while they wanted to run.
    public let stealMilliseconds: Double
    /// Milliseconds, summed over all CPUs since boot, spent idle waiting for I/O.
    public let iowaitMilliseconds: Double
    /// Milliseconds, summed over all CPUs since boot, spent running anything (all but idle and iowait).
    public let busyMilliseconds: Double
    /// When it was read (`DispatchTime` uptime). A plain value: any thread.
    public let uptimeNanoseconds: UInt64

    /// The counts now; nil where `/proc/stat` cannot be read or parsed.
    public static func now() -> MachineLoad? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
        else { return nil }
        let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        // user nice system idle iowait irq softirq steal ...
        guard ticks.count >= 8 else { return nil }
        let millisecondsPerTick = 1000 / Double(sysconf(Int32(_SC_CLK_TCK)))
        let all = ticks.prefix(8).reduce(0, +)
        return MachineLoad(
            stealMilliseconds: ticks[7] * millisecondsPerTick, iowaitMilliseconds: ticks[4] * millisecondsPerTick,
            busyMilliseconds: (all - ticks[3] - ticks[4]) * millisecondsPerTick,
            uptimeNanoseconds: DispatchTime.now().uptimeNanoseconds)
    }

    /// What happened on the machine between `earlier` and this reading, in words: steal, iowait and how many CPUs'
    /// worth of work ran on average (counted in 10 ms ticks, so short spans are coarse).
    public func since(_ earlier: MachineLoad) -> String {
        let seconds = Double(uptimeNanoseconds - earlier.uptimeNanoseconds) / 1e9
        let busyCPUs = seconds > 0 ? (busyMilliseconds - earlier.busyMilliseconds) / 1000 / seconds : 0
        return String(
            format: "over %.1f s the machine had %.0f ms of steal, %.0f ms of iowait, %.2f CPUs busy on average",
            seconds, stealMilliseconds - earlier.stealMilliseconds, iowaitMilliseconds - earlier.iowaitMilliseconds,
            busyCPUs)
    }

    /// What happened on the machine while `body` ran, in words (see ``since(_:)``): for a measurement's report.
    public static func during<Result>(_ body: () async throws -> Result) async rethrows -> (Result, String) {
        let before = now()
        let result = try await body()
        guard let before, let after = now() else { return (result, "(/proc/stat unreadable)") }
        return (result, after.since(before))
    }
}

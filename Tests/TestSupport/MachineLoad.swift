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

    /// What happened on the machine between two readings: see ``since(_:)``. A plain value, for any thread.
    public struct Change: Sendable, CustomStringConvertible {
        /// Seconds between the readings.
        public let seconds: Double
        /// Milliseconds of steal between them, summed over all CPUs: the time the host ran something else.
        public let stealMilliseconds: Double
        /// Milliseconds idle waiting for I/O between them, summed over all CPUs.
        public let iowaitMilliseconds: Double
        /// How many CPUs' worth of work ran on average (counted in 10 ms ticks, so short spans are coarse).
        public let busyCPUs: Double

        /// A change as given: for a test of what depends on one.
        public init(seconds: Double, stealMilliseconds: Double, iowaitMilliseconds: Double = 0, busyCPUs: Double = 0) {
            self.seconds = seconds
            self.stealMilliseconds = stealMilliseconds
            self.iowaitMilliseconds = iowaitMilliseconds
            self.busyCPUs = busyCPUs
        }

        /// In words, for a message beside a missed bound.
        public var description: String {
            String(
                format: "over %.1f s the machine had %.0f ms of steal, %.0f ms of iowait, %.2f CPUs busy on average",
                seconds, stealMilliseconds, iowaitMilliseconds, busyCPUs)
        }
    }

    /// What happened on the machine between `earlier` and this reading.
    public func since(_ earlier: MachineLoad) -> Change {
        let seconds = Double(uptimeNanoseconds - earlier.uptimeNanoseconds) / 1e9
        return Change(
            seconds: seconds, stealMilliseconds: stealMilliseconds - earlier.stealMilliseconds,
            iowaitMilliseconds: iowaitMilliseconds - earlier.iowaitMilliseconds,
            busyCPUs: seconds > 0 ? (busyMilliseconds - earlier.busyMilliseconds) / 1000 / seconds : 0)
    }

    /// What happened on the machine while `body` ran (see ``since(_:)``), nil where `/proc/stat` cannot be read: for
    /// a measurement's report, and for an allowance that depends on steal
    /// (``PulseServer/Kind/droppedQuanta(during:)``).
    public static func during<Result>(_ body: () async throws -> Result) async rethrows -> (Result, Change?) {
        let before = now()
        let result = try await body()
        guard let before, let after = now() else { return (result, nil) }
        return (result, after.since(before))
    }
}

extension MachineLoad.Change? {
    /// The change in words (``MachineLoad/Change/description``), or that `/proc/stat` could not tell it.
    public var inWords: String { self?.description ?? "(the machine's load is unknown: /proc/stat unreadable)" }

    /// How many ticks of a clock with a period of `milliseconds` fell due while the host held the CPUs: the steal
    /// over the period, rounded up; 0 without steal or where the load is unknown. A tick due then cannot run on time,
    /// and those of one stall run together when it ends. Steal is summed over CPUs, so a stall of the whole machine
    /// counts once per CPU: an upper bound, for a test that forgives the ticks the host made late.
    public func ticksStolen(periodMilliseconds milliseconds: Double) -> Int {
        guard let steal = self?.stealMilliseconds, steal > 0 else { return 0 }
        return Int((steal / milliseconds).rounded(.up))
    }
}

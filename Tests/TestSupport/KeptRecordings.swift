import Foundation

/// Where a comparison that refuses a recording writes it and its reference, so that a failure seen once can be read
/// again afterwards: the folder `QUEUEPLAYER_TEST_KEEP` names, or none when it is unset (then nothing is written).
/// Threading: none of its own; its members may be called from any thread.
public enum KeptRecordings {
    /// The folder `QUEUEPLAYER_TEST_KEEP` names, or nil when it is unset or empty. Read from the environment at each
    /// call, from any thread.
    public static var folder: String? {
        ProcessInfo.processInfo.environment["QUEUEPLAYER_TEST_KEEP"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Writes `recording` and `reference` (interleaved stereo, 44.1 kHz) as raw signed 16-bit little-endian files
    /// into `folder` (made if missing) and says where, in words for a failure message; "" when `folder` is nil.
    /// Called only on a refusal, from any thread: each pair gets names of its own.
    public static func keep(_ recording: [Int16], reference: [Int16], in folder: String? = folder) -> String {
        guard let folder else { return "" }
        let name = "refused-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
        let base = URL(fileURLWithPath: folder).appendingPathComponent(name)
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try rawData(recording).write(to: base.appendingPathExtension("heard.s16"))
            try rawData(reference).write(to: base.appendingPathExtension("reference.s16"))
        } catch {
            return "; not kept: \(error)"
        }
        return "; kept as \(base.path).{heard,reference}.s16"
    }

    private static func rawData(_ samples: [Int16]) -> Data {
        Data(samples.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] })
    }
}

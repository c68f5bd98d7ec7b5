import Foundation

/// A minimal reader for the WAV files `mpg123 -w` writes: PCM 16-bit or IEEE float 32-bit, any channel count.
public struct WAVFile {
    public struct FormatError: Error, CustomStringConvertible {
        public let description: String
    }

    public let formatCode: UInt16
    public let channelCount: Int
    public let sampleRate: Int
    public let data: Data

    public init(contentsOf url: URL) throws {
        let bytes = try Data(contentsOf: url)
        guard bytes.count >= 12, bytes.prefix(4) == Data("RIFF".utf8) else {
            throw FormatError(description: "\(url.path) is not a RIFF file")
        }
        var offset = 12
        var format: (code: UInt16, channels: Int, rate: Int)?
        var payload: Data?
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = Int(Self.uint32(bytes, offset + 4))
            let body = offset + 8
            switch id {
            case "fmt ":
                format = (
                    Self.uint16(bytes, body), Int(Self.uint16(bytes, body + 2)), Int(Self.uint32(bytes, body + 4))
                )
            case "data":
                payload = bytes.subdata(in: body..<min(bytes.count, body + size))
            default:
                break
            }
            offset = body + size + (size & 1)
        }
        guard let format, let payload else { throw FormatError(description: "\(url.path) lacks fmt or data") }
        (formatCode, channelCount, sampleRate, data) = (format.code, format.channels, format.rate, payload)
    }

    /// Float samples, mono duplicated into stereo.
    public func stereoFloatSamples() throws -> [Float] {
        guard formatCode == 3 else { throw FormatError(description: "not a float WAV (format \(formatCode))") }
        return stereo(data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) })
    }

    /// 16-bit samples, mono duplicated into stereo.
    public func stereoInt16Samples() throws -> [Int16] {
        guard formatCode == 1 else { throw FormatError(description: "not a 16-bit WAV (format \(formatCode))") }
        return stereo(data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) })
    }

    private func stereo<T>(_ samples: [T]) -> [T] {
        channelCount == 1 ? samples.flatMap { [$0, $0] } : samples
    }

    private static func uint16(_ data: Data, _ at: Int) -> UInt16 {
        UInt16(data[at]) | UInt16(data[at + 1]) << 8
    }

    private static func uint32(_ data: Data, _ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(data[at + $1]) << (8 * $1) }
    }
}

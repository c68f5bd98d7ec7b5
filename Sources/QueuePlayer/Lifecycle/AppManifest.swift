import FoundationEssentials
import Logging

/// The capabilities a program declares, read from a property list like an iOS app's `Info.plist`.
///
/// Only `UIBackgroundModes` is read (other keys are ignored); its `audio` mode grants background audio. The file
/// may be an XML or binary property list, or the same dictionary as JSON. See ``load(from:logger:)`` for how each
/// kind of bad manifest is treated. A value; `Sendable`.
public struct AppManifest: Sendable, Equatable {
    /// A background mode this platform supports.
    public enum BackgroundMode: String, Sendable, Hashable, CaseIterable {
        /// Playback goes on in the background, and observers keep firing.
        case audio
    }

    /// The modes iOS defines that mean nothing on this platform: declaring them is warned about, not an error.
    public static let unsupportedModes: Set<String> = [
        "location", "voip", "fetch", "remote-notification", "newsstand-content", "external-accessory",
        "bluetooth-central", "bluetooth-peripheral", "processing", "push-to-talk", "nearby-interaction",
    ]

    /// The manifest's key for background modes.
    public static let backgroundModesKey = "UIBackgroundModes"

    /// The background modes declared and supported.
    public var backgroundModes: Set<BackgroundMode>

    /// A manifest declaring `backgroundModes` (none by default: backgrounding pauses playback).
    public init(backgroundModes: Set<BackgroundMode> = []) {
        self.backgroundModes = backgroundModes
    }

    /// True when `audio` is declared: playback continues in the background.
    public var allowsBackgroundAudio: Bool { backgroundModes.contains(.audio) }

    /// Where the manifest is looked for when no path is given: `$XDG_CONFIG_HOME/queueplayer/Info.plist`, or
    /// `~/.config/queueplayer/Info.plist`.
    public static func defaultURL(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        let configuration =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? "/root") + "/.config")
        return URL(fileURLWithPath: configuration).appendingPathComponent("queueplayer/Info.plist")
    }

    /// Reads the manifest at `url`.
    ///
    /// - A missing file means no capabilities: a warning names the path looked at.
    /// - A file that is not a property list, whose root is not a dictionary, whose `UIBackgroundModes` is not an
    ///   array of strings, or that names a mode iOS does not define, throws a ``ManifestError`` naming the file and
    ///   the problem.
    /// - Modes iOS defines but this platform cannot honour (`location`, `voip`, `fetch`, …) are warned about as
    ///   "not supported on this platform" and otherwise ignored.
    public static func load(from url: URL, logger: Logger) throws(ManifestError) -> AppManifest {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            if !FileManager.default.fileExists(atPath: url.path) {
                logger.warning(
                    "no manifest at \(url.path): no background modes, so entering the background pauses playback",
                    metadata: ["hint": "write there a property list whose UIBackgroundModes array holds 'audio'"])
                return AppManifest()
            }
            throw ManifestError(url: url, problem: "cannot be read (\(error))")
        }
        let declared = try declaredModes(in: data, url: url)
        var manifest = AppManifest()
        for mode in declared {
            if let supported = BackgroundMode(rawValue: mode) {
                manifest.backgroundModes.insert(supported)
            } else if unsupportedModes.contains(mode) {
                logger.warning(
                    "\(url.path): \(backgroundModesKey) mode '\(mode)' is not supported on this platform; ignored")
            } else {
                let known = (BackgroundMode.allCases.map(\.rawValue) + unsupportedModes.sorted()).joined(
                    separator: ", ")
                throw ManifestError(
                    url: url, problem: "\(backgroundModesKey) has an unknown mode '\(mode)' (iOS defines \(known))")
            }
        }
        return manifest
    }

    /// The strings under `UIBackgroundModes`, from a property list or JSON.
    private static func declaredModes(in data: Data, url: URL) throws(ManifestError) -> [String] {
        let looksLikeJSON = data.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == UInt8(ascii: "{")
        do {
            let contents =
                looksLikeJSON
                ? try JSONDecoder().decode(ManifestContents.self, from: data)
                : try PropertyListDecoder().decode(ManifestContents.self, from: data)
            return contents.backgroundModes ?? []
        } catch let DecodingError.typeMismatch(_, context) where !context.codingPath.isEmpty {
            throw ManifestError(url: url, problem: "\(backgroundModesKey) must be an array of strings")
        } catch {
            let kind = looksLikeJSON ? "JSON" : "property list"
            throw ManifestError(url: url, problem: "not a valid \(kind) dictionary (\(Self.reason(error)))")
        }
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context), DecodingError.typeMismatch(_, let context):
            context.underlyingError.map { "\($0)" } ?? context.debugDescription
        default: "\(error)"
        }
    }
}

/// The keys of a manifest this package reads.
private struct ManifestContents: Decodable {
    let backgroundModes: [String]?

    enum CodingKeys: String, CodingKey {
        case backgroundModes = "UIBackgroundModes"
    }
}

/// A manifest that cannot be used; the description names the file, the problem and what to do.
public struct ManifestError: Error, Equatable, CustomStringConvertible {
    /// The manifest file.
    public let url: URL
    /// What is wrong with it.
    public let problem: String

    /// The file, the problem and what to do, in one line.
    public var description: String {
        "manifest \(url.path): \(problem); fix or replace it (with no manifest at all, no background mode is declared)"
    }
}

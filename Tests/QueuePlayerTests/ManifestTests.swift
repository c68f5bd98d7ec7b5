import Foundation
import TestSupport
import TestTiers
import Testing

@testable import QueuePlayer

@Suite("The manifest: UIBackgroundModes from a property list", .tier(.deterministic))
struct ManifestTests {
    let log = CapturedLog()

    func manifest(_ contents: String, suffix: String = "plist") throws -> (Result<AppManifest, ManifestError>, URL) {
        let url = URL(fileURLWithPath: "\(Scratch.uniquePath("manifest")).\(suffix)")
        try Data(contents.utf8).write(to: url)
        return (Result { () throws(ManifestError) in try AppManifest.load(from: url, logger: log.logger) }, url)
    }

    static func plist(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict>\(body)</dict></plist>
        """
    }

    @Test("an XML plist or JSON declaring audio grants background audio; other keys are ignored")
    func audio() throws {
        let (xml, _) = try manifest(
            Self.plist(
                "<key>CFBundleName</key><string>Q</string>"
                    + "<key>UIBackgroundModes</key><array><string>audio</string></array>"
            ))
        #expect(try xml.get().allowsBackgroundAudio)
        let (json, _) = try manifest(#"{"UIBackgroundModes": ["audio"], "Other": 1}"#, suffix: "json")
        #expect(try json.get().allowsBackgroundAudio)
        let (none, _) = try manifest(Self.plist("<key>UIBackgroundModes</key><array/>"))
        #expect(try none.get() == AppManifest())
    }

    @Test("the shipped example declares audio")
    func shippedExample() throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("contrib/Info.plist")
        #expect(try AppManifest.load(from: example, logger: log.logger).allowsBackgroundAudio)
    }

    @Test("a missing manifest means no capability, with a warning naming the path looked at")
    func missing() throws {
        let url = URL(fileURLWithPath: "/tmp/queueplayer-no-such-dir/Info.plist")
        #expect(try AppManifest.load(from: url, logger: log.logger) == AppManifest())
        #expect(log.messages(at: .warning).contains { $0.contains(url.path) })
    }

    @Test("iOS modes this platform cannot honour are warned about as not supported, and ignored")
    func unsupported() throws {
        let (result, url) = try manifest(
            Self.plist(
                "<key>UIBackgroundModes</key>"
                    + "<array><string>location</string><string>voip</string><string>audio</string></array>"
            ))
        #expect(try result.get().backgroundModes == [.audio])
        let warnings = log.messages(at: .warning)
        #expect(warnings.count == 2)
        #expect(warnings.allSatisfy { $0.contains("not supported on this platform") && $0.contains(url.path) })
    }

    @Test(
        "malformed manifests are errors naming the file and the problem",
        arguments: [
            ("<plist><dict><key>UIBackgroundModes</key>", "not a valid property list"),
            (#"{"UIBackgroundModes": ["audio"]"#, "not a valid JSON"),
            (
                plist("<key>UIBackgroundModes</key><string>audio</string>"),
                "UIBackgroundModes must be an array of strings"
            ),
            (plist("<key>UIBackgroundModes</key><array><integer>1</integer></array>"), "must be an array of strings"),
            (plist("<key>UIBackgroundModes</key><array><string>audoi</string></array>"), "unknown mode 'audoi'"),
            ("<?xml version=\"1.0\"?><plist version=\"1.0\"><array/></plist>", "not a valid property list dictionary"),
        ])
    func malformed(contents: String, problem: String) throws {
        let (result, url) = try manifest(contents)
        guard case .failure(let error) = result else {
            Issue.record("\(contents) was accepted")
            return
        }
        #expect(error.description.contains(url.path))
        #expect(error.description.contains(problem), "\(error)")
    }
}

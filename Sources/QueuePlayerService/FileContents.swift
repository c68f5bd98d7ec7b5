import Foundation

/// Whole files read for the front ends: playlists, stored playlists, cover pictures.
///
/// Threading: any thread.
package enum FileContents {
    /// The bytes of the file at `path`, or nil when it cannot be read. An empty regular file is answered without
    /// reading it: Foundation's read of a file that reports no size keeps the 4 KiB buffer it read into when it
    /// finds nothing (swift-foundation 6.3 on Linux), which an MPD client listing an empty stored playlist would
    /// cost on every listing.
    package static func bytes(atPath path: String) -> [UInt8]? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        if attributes[.type] as? FileAttributeType == .typeRegular, attributes[.size] as? Int == 0 { return [] }
        return FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }
}

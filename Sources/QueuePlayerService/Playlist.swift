import FoundationEssentials
import QueuePlayer

/// A playlist file, as music collections and radio stations hand them out: M3U and M3U8 (one path or URL per line,
/// `#` lines are comments such as `#EXTM3U` and `#EXTINF`) and PLS (an INI-style `[playlist]` with `File1=`,
/// `File2=`, …). HLS playlists (M3U8 with `#EXT-X-` tags: segments of an adaptive stream) are refused. Pure
/// functions, for any thread.
package enum Playlist {
    /// The playlist kinds, told by the file's extension.
    package enum Format: Sendable, Equatable {
        case m3u
        case pls
    }

    /// Why a playlist gave nothing to queue: it names the playlist and says what to do.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The playlist's path.
        package let path: String
        /// What is wrong, and what to do about it.
        package let reason: String

        package var description: String { "\(path): \(reason)" }
    }

    /// The format of the file at `path` by its extension (`.m3u`, `.m3u8`, `.pls`, any case), or nil for another
    /// file.
    package static func format(ofPath path: String) -> Format? {
        switch path.split(separator: ".").last?.lowercased() {
        case "m3u", "m3u8": .m3u
        case "pls": .pls
        default: nil
        }
    }

    /// The entries of the playlist at `path`, in its order: paths resolved against the playlist's folder,
    /// `file://` URIs as files, network URLs as they are. Throws when the file cannot be read, is HLS, or lists
    /// nothing.
    package static func entries(ofFileAt path: String) throws(Failure) -> [URL] {
        guard let format = format(ofPath: path) else {
            throw Failure(path: path, reason: "not a playlist (.m3u, .m3u8 or .pls)")
        }
        guard let bytes = FileContents.bytes(atPath: path) else {
            throw Failure(path: path, reason: "cannot be read; check that it exists and that you may read it")
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        return try entries(in: text(of: bytes), format: format, relativeTo: folder, path: path)
    }

    /// The format a server's `Content-Type` names: M3U (`audio/x-mpegurl`, `audio/mpegurl`, `application/x-mpegurl`,
    /// and HLS's `application/vnd.apple.mpegurl`, whose text is then refused) or PLS (`audio/x-scpls`,
    /// `application/pls+xml`); nil for another type.
    package static func format(ofContentType type: String) -> Format? {
        let type = type.lowercased()
        if type.contains("mpegurl") { return .m3u }
        if type.contains("scpls") || type.contains("pls+xml") { return .pls }
        return nil
    }

    /// The entries of the playlist fetched from `url` (its format told by the URL's path, else by the answer's
    /// content type: a station's tune-in link rarely ends in `.pls`), in its order: relative references resolved
    /// against the URL. Throws when the document is a web page or binary, is HLS, or lists nothing.
    package static func entries(ofRemote url: URL, document: RemoteDocument.Fetched) throws(Failure) -> [URL] {
        let location = url.absoluteString
        guard let format = format(ofPath: url.path) ?? document.contentType.flatMap(format(ofContentType:)) else {
            throw Failure(path: location, reason: "not a playlist (.m3u, .m3u8 or .pls)")
        }
        if document.contentType?.contains("html") == true || document.bytes.contains(0) {
            let what = document.contentType.map { "the server sent \($0)" } ?? "it is not text"
            throw Failure(
                path: location,
                reason: "is not a playlist: \(what); check the URL: it should lead to the .m3u or .pls itself")
        }
        return try entries(in: text(of: document.bytes), format: format, relativeTo: url, path: location)
    }

    /// The entries of a playlist's `text` (see ``entries(ofFileAt:)``), relative references resolved against `base`:
    /// a playlist file's folder, or a remote playlist's own URL. `path` names it in errors.
    package static func entries(
        in text: String, format: Format, relativeTo base: URL, path: String
    ) throws(Failure) -> [URL] {
        let lines = text.split(whereSeparator: \.isNewline).map {
            $0.trimmingCharacters(in: .whitespaces.union(["\u{FEFF}"]))
        }
        let references: [String]
        switch format {
        case .m3u:
            if lines.contains(where: { $0.hasPrefix("#EXT-X-") }) {
                throw Failure(
                    path: path,
                    reason: "is an HLS playlist (the segments of an adaptive stream), which QueuePlayer does not "
                        + "play; give the station's direct MP3 stream or a plain .m3u instead")
            }
            references = lines.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        case .pls:
            references = plsFiles(lines)
        }
        guard !references.isEmpty else {
            let expected = format == .m3u ? "a path or URL per line" : "File1=, File2=, … entries"
            throw Failure(path: path, reason: "lists nothing to play; expected \(expected)")
        }
        return references.map { resolve($0, relativeTo: base) }
    }

    /// The values of a PLS's `FileN=` keys (any case), in the order of N: stations number them, and the lines need
    /// not be in that order.
    private static func plsFiles(_ lines: [String]) -> [String] {
        let numbered = lines.compactMap { line -> (Int, String)? in
            guard let equals = line.firstIndex(of: "="), line.lowercased().hasPrefix("file"),
                let number = Int(line[line.index(line.startIndex, offsetBy: 4)..<equals])
            else { return nil }
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : (number, value)
        }
        return numbered.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// A reference as a URL: one with a scheme as it is (`file://` becomes a file URL). In a remote playlist, any
    /// other reference is relative to its URL; in a file, an absolute path is a file and a relative one is in
    /// `base`, its folder.
    private static func resolve(_ reference: String, relativeTo base: URL) -> URL {
        if reference.contains("://"), let url = URL(string: reference), url.scheme != nil {
            return url.isFileURL ? URL(fileURLWithPath: url.path) : url
        }
        if !base.isFileURL {
            let escaped = reference.addingPercentEncoding(withAllowedCharacters: .urlFragmentAllowed) ?? reference
            return URL(string: escaped, relativeTo: base)?.absoluteURL ?? base
        }
        if reference.hasPrefix("/") { return URL(fileURLWithPath: reference) }
        return base.appendingPathComponent(reference).standardizedFileURL
    }

    /// The playlist's text: UTF-8 when it is valid UTF-8 (a byte order mark is trimmed with the whitespace), otherwise
    /// Latin-1, which old `.m3u` files use (every byte is a character there, so nothing is lost or garbled).
    private static func text(of bytes: [UInt8]) -> String {
        if let utf8 = String(validating: bytes, as: UTF8.self) { return utf8 }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}

import Foundation
import Logging

/// Turns the command line's ITEM arguments into the files to queue.
enum ItemPaths {
    /// Files stay as given (a missing or bad one is queued anyway, so that it fails alone, in its place, with a
    /// message naming it). Folders become their MP3 files, searched recursively, in name order with numbers
    /// compared by value ("2" before "10"). A folder with no MP3 is reported and contributes nothing.
    static func expand(_ arguments: [String], logger: Logger) -> [URL] {
        arguments.flatMap { argument -> [URL] in
            let url = URL(fileURLWithPath: argument)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue
            else { return [url] }
            let files = mp3Files(in: url)
            if files.isEmpty {
                logger.warning("\(url.path): this folder holds no .mp3 files; nothing from it was queued")
            }
            return files
        }
    }

    private static func mp3Files(in folder: URL) -> [URL] {
        let base = folder.standardizedFileURL.path
        guard let enumerator = FileManager.default.enumerator(atPath: base) else { return [] }
        let relativePaths = enumerator.compactMap { $0 as? String }
            .filter { $0.lowercased().hasSuffix(".mp3") }
            .sorted { $0.localizedStandardCompare($1) == .orderedAscending }
        return relativePaths.map { URL(fileURLWithPath: base).appendingPathComponent($0) }
    }
}

import FoundationEssentials
import Logging

/// Turns the command line's ITEM arguments into the files to queue.
package enum ItemPaths {
    /// Files stay as given (a missing or bad one is queued anyway, so that it fails alone, in its place, with a
    /// message naming it). Folders become their MP3 files, searched recursively, in name order with numbers
    /// compared by value ("2" before "10"). A folder with no MP3 is reported and contributes nothing.
    package static func expand(_ arguments: [String], logger: Logger) -> [URL] {
        arguments.flatMap { argument -> [URL] in
            let url = URL(fileURLWithPath: argument)
            var isDirectory = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory
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
        let relativePaths = ((try? FileManager.default.subpathsOfDirectory(atPath: base)) ?? [])
            .filter { $0.lowercased().hasSuffix(".mp3") }
            .sorted { NaturalOrder.precedes($0, $1) }
        return relativePaths.map { URL(fileURLWithPath: base).appendingPathComponent($0) }
    }
}

/// Orders names as a person would: runs of digits compare by value ("2-b" before "10-a"), the rest by Unicode
/// scalar, case-insensitively first.
package enum NaturalOrder {
    package static func precedes(_ left: String, _ right: String) -> Bool {
        let (a, b) = (chunks(left.lowercased()), chunks(right.lowercased()))
        for (x, y) in zip(a, b) where x != y {
            if let m = Int(x), let n = Int(y) { return m != n ? m < n : x.count < y.count }
            return x < y
        }
        return a.count != b.count ? a.count < b.count : left < right
    }

    /// Splits into alternating runs of digits and non-digits.
    private static func chunks(_ text: String) -> [String] {
        var result: [String] = []
        var current = ""
        for character in text {
            if let last = current.last, last.isNumber != character.isNumber {
                result.append(current)
                current = ""
            }
            current.append(character)
        }
        if !current.isEmpty { result.append(current) }
        return result
    }
}

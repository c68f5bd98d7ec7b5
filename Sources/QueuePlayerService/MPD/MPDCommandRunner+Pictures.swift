import FoundationEssentials
import Glibc
import QueuePlayer

/// Pictures and files: `albumart` (a cover file beside the song), `readpicture` (the picture in its tag),
/// `readcomments` (the rest of its tag), `listfiles` (a folder as it is on disk).
extension MPDCommandRunner {
    /// The cover files `albumart` looks for beside a song, in MPD's order.
    static let coverNames = ["cover.png", "cover.jpg", "cover.jxl", "cover.webp"]

    /// MPD's `albumart URI OFFSET`: the first cover file in the song's folder, its size and the chunk from OFFSET.
    func albumArt(_ uri: String, offset text: String) throws(MPDError) -> String {
        let offset = try MPDArguments.unsigned(text)
        let location = try musicFolder.item(uri, isLocalClient: isLocalClient)
        guard QueueEntry.isFileLocation(location) else { throw MPDError(.noExist, "No file exists") }
        let folder = String(location[..<(location.lastIndex(of: "/") ?? location.startIndex)])
        let cover = Self.coverNames.lazy.compactMap { name in FileContents.bytes(atPath: "\(folder)/\(name)") }.first
        guard let cover else { throw MPDError(.noExist, "No file exists") }
        guard offset <= cover.count else { throw MPDError(.argument, "Offset too large") }
        binary.stage(cover, from: offset)
        return "size: \(cover.count)\n"
    }

    /// MPD's `readpicture URI OFFSET`: the first picture in the song's tag, its size, type and the chunk from
    /// OFFSET; nothing when it has none.
    func readPicture(_ uri: String, offset text: String) throws(MPDError) -> String {
        let offset = try MPDArguments.unsigned(text)
        let location = try musicFolder.item(uri, isLocalClient: isLocalClient)
        guard QueueEntry.isFileLocation(location) else { return "" }
        let pictures: [ItemPicture]
        do throws(DecoderError) {
            pictures = try PlayerItem.pictures(in: URL(fileURLWithPath: location))
        } catch {
            throw MPDError(.noExist, "\(error)")
        }
        guard let picture = pictures.first else { return "" }
        guard offset <= picture.bytes.count else { throw MPDError(.argument, "Bad file offset") }
        binary.stage(picture.bytes, from: offset)
        return "size: \(picture.bytes.count)\n" + (picture.mimeType.isEmpty ? "" : "type: \(picture.mimeType)\n")
    }

    /// MPD's `readcomments URI`: the comments in the song's tag (its ID3v2 `TXXX` frames), `KEY: VALUE` each, in the
    /// tag's order; one with a line break in it is left out, as MPD leaves it out. What is not a song of this box
    /// is `No such song`, a path outside the music folder `Access denied`, as MPD answers them.
    func readComments(_ uri: String) throws(MPDError) -> String {
        let location: String
        do throws(MPDError) {
            location = try musicFolder.item(uri, isLocalClient: isLocalClient)
        } catch {
            throw error.code == .permission ? error : MPDError(.noExist, "No such song")
        }
        guard QueueEntry.isFileLocation(location) else {
            throw MPDError(.noExist, "only a local file's comments can be read")
        }
        guard let comments = try? PlayerItem.comments(in: URL(fileURLWithPath: location)) else {
            throw MPDError(.noExist, "No such song")
        }
        return comments.filter { !"\($0.key)\($0.value)".contains(where: \.isNewline) }
            .map { "\($0.key): \($0.value)\n" }.joined()
    }

    /// MPD's `listfiles [URI]`: a folder of the music folder as it is on disk, every file (with its size) and
    /// subfolder, hidden names left out, in name order.
    func listFiles(_ uri: String?) throws(MPDError) -> String {
        let location = try musicFolder.item(uri == "/" ? "" : uri ?? "", isLocalClient: isLocalClient)
        guard QueueEntry.isFileLocation(location),
            let names = try? FileManager.default.contentsOfDirectory(atPath: location)
        else { throw MPDError(.noExist, "No such directory") }
        return names.filter { !$0.hasPrefix(".") }.sorted().compactMap { name -> String? in
            var info = stat()
            guard stat("\(location)/\(name)", &info) == 0 else { return nil }
            let modified = Self.lastModified(Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec)))
            if info.st_mode & S_IFMT == S_IFDIR { return Self.field("directory", name) + modified }
            return Self.field("file", name) + "size: \(info.st_size)\n" + modified
        }.joined()
    }
}

import CXML2
import FoundationEssentials

/// Reads a podcast feed, RSS 2.0 or Atom, with libxml2's streaming reader (`xmlTextReader`): never the network
/// (`XML_PARSE_NONET`), no entity expansion beyond XML's own.
///
/// Why the pointers are safe: the reader reads `bytes` only inside `withUnsafeBufferPointer`, where the buffer is
/// alive, and is freed before it returns; every string libxml2 hands out is copied into a Swift `String` and freed
/// with libxml2's `xmlFree` at once; the constant names (`xmlTextReaderConstLocalName`) belong to the reader and are
/// copied before the next read. Pure; any thread (each call has a reader of its own).
package enum FeedReader {
    /// True when `bytes` is an RSS or Atom document: its root element is `rss` or `feed`.
    package static func isFeed(_ bytes: [UInt8]) -> Bool {
        read(bytes, location: "") { reader in
            while xmlTextReaderRead(reader) == 1 {
                guard xmlTextReaderNodeType(reader) == Int32(XML_READER_TYPE_ELEMENT.rawValue) else { continue }
                return ["rss", "feed"].contains(localName(reader))
            }
            return false
        } ?? false
    }

    /// The feed in `bytes`, fetched from `location` (which names it in errors, and against which relative enclosure
    /// URLs resolve). Throws when it is not well-formed XML, not a feed, or lists no MP3 episode.
    package static func feed(in bytes: [UInt8], location: URL) throws(Feed.Failure) -> Feed {
        let name = location.absoluteString
        let parsed = read(bytes, location: name) { reader in
            var parse = Parse(reader: reader, base: location)
            return parse.run()
        }
        guard let parsed, parsed.isWellFormed else {
            throw Feed.Failure(location: name, reason: "is not well-formed XML; check the URL of the feed")
        }
        guard parsed.isFeed else {
            throw Feed.Failure(location: name, reason: "is XML but not a podcast feed (RSS or Atom)")
        }
        return try Feed(show: parsed.show, enclosures: parsed.enclosures, location: name)
    }

    /// Runs `body` with a reader of `bytes`; nil when libxml2 cannot make one.
    private static func read<Result>(
        _ bytes: [UInt8], location: String, _ body: (OpaquePointer) -> Result
    ) -> Result? {
        bytes.withUnsafeBufferPointer { buffer -> Result? in
            let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)
            let pointer = buffer.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
            guard let reader = xmlReaderForMemory(pointer, Int32(buffer.count), location, nil, options) else {
                return nil
            }
            defer { xmlFreeTextReader(reader) }
            return body(reader)
        }
    }

    fileprivate static func localName(_ reader: OpaquePointer) -> String {
        xmlTextReaderConstLocalName(reader).map { String(cString: $0) } ?? ""
    }

    /// Copies and frees a string libxml2 handed out.
    fileprivate static func take(_ text: UnsafeMutablePointer<xmlChar>?) -> String? {
        guard let text else { return nil }
        defer { queueplayer_xml_free(text) }
        return String(cString: text)
    }

    /// One pass over a document.
    private struct Parse {
        let reader: OpaquePointer
        let base: URL
        var isFeed = false
        var isWellFormed = true
        var show: String?
        var enclosures: [(episode: Feed.Episode, type: String?)] = []
        /// The episode being read: inside an RSS `item` or an Atom `entry`.
        var episode: (title: String?, published: Date?, duration: Double?, url: URL?, type: String?)?

        init(reader: OpaquePointer, base: URL) {
            self.reader = reader
            self.base = base
        }

        mutating func run() -> Parse {
            while true {
                let status = xmlTextReaderRead(reader)
                if status < 0 { isWellFormed = false }
                guard status == 1 else { break }
                let type = xmlTextReaderNodeType(reader)
                let name = FeedReader.localName(reader)
                if type == Int32(XML_READER_TYPE_END_ELEMENT.rawValue) {
                    if name == "item" || name == "entry" { finishEpisode() }
                    continue
                }
                guard type == Int32(XML_READER_TYPE_ELEMENT.rawValue) else { continue }
                element(name, depth: Int(xmlTextReaderDepth(reader)))
            }
            return self
        }

        private mutating func element(_ name: String, depth: Int) {
            if depth == 0 {
                isFeed = name == "rss" || name == "feed"
                return
            }
            guard isFeed else { return }
            switch name {
            case "item", "entry":
                episode = (nil, nil, nil, nil, nil)
                if xmlTextReaderIsEmptyElement(reader) == 1 { finishEpisode() }
            case "title":
                let text = FeedReader.take(xmlTextReaderReadString(reader))?.trimmingCharacters(in: .whitespaces)
                if episode != nil {
                    episode?.title = text
                } else if show == nil {
                    show = text
                }
            case "pubDate", "published", "updated":
                guard episode != nil, episode?.published == nil || name == "published" else { return }
                episode?.published = FeedReader.take(xmlTextReaderReadString(reader)).flatMap(FeedDate.parse)
            case "duration":
                guard episode != nil else { return }
                episode?.duration = FeedReader.take(xmlTextReaderReadString(reader)).flatMap(FeedDuration.parse)
            case "enclosure":
                enclosure(at: attribute("url"))
            case "link" where attribute("rel") == "enclosure":
                enclosure(at: attribute("href"))
            default:
                break
            }
        }

        /// The episode's first enclosure, at `reference` (relative to the feed's URL, or absolute), of the type the
        /// element says.
        private mutating func enclosure(at reference: String?) {
            guard episode != nil, episode?.url == nil else { return }
            let url = reference.flatMap { URL(string: $0, relativeTo: base)?.absoluteURL }
            let type = attribute("type")
            episode?.url = url
            episode?.type = type
        }

        private mutating func finishEpisode() {
            defer { episode = nil }
            guard let episode, let url = episode.url, url.isRemoteItem else { return }
            enclosures.append(
                (
                    Feed.Episode(
                        url: url, title: episode.title, published: episode.published, duration: episode.duration),
                    episode.type
                ))
        }

        private func attribute(_ name: String) -> String? {
            FeedReader.take(xmlTextReaderGetAttribute(reader, name))
        }
    }
}

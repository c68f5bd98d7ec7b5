/// A tag given to a queued item by a front end (MPD's `addtagid`, the socket's `tag`): a name as MPD spells its tags
/// (`Title`, `Artist`, `MUSICBRAINZ_TRACKID`…) and its text.
package struct EntryTag: Codable, Sendable, Equatable {
    /// The tag's name, as MPD spells it.
    package var name: String
    /// The tag's text; never empty.
    package var value: String

    /// The tag `name` with `value`.
    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension [EntryTag] {
    /// The values of the tags named `name` (as MPD spells it), in the order given.
    package func values(named name: String) -> [String] {
        filter { $0.name == name }.map(\.value)
    }
}

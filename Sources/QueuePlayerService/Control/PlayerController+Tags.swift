import QueuePlayer
import QueuePlayerControl

/// Tags that front ends give to queued remote items (MPD's `addtagid` and `cleartagid`, the socket's `tag` and
/// `untag`): what a station or a server's file is shown as while it sends no tags of its own. A local file's tags are
/// its own, and cannot be given.
extension PlayerController {
    /// Gives `entry` the tag `name` (any of MPD's tag names, in any letter case) with `value`, after those it has; an
    /// empty value changes nothing, as in MPD. On the command path.
    func tag(_ entry: QueueEntry, name: String, value: String) throws(ControlError) {
        let name = try tagName(name, of: entry, command: "tag")
        guard !value.isEmpty else { return }
        state.withLock { $0.entryTags[entry.id, default: []].append(EntryTag(name: name, value: value)) }
    }

    /// Takes back the tags `name` given to `entry`, or all it was given when `name` is nil. On the command path.
    func untag(_ entry: QueueEntry, name: String?) throws(ControlError) {
        try checkRemote(entry, command: "untag")
        let name = try name.map { name throws(ControlError) in try tagName(name, of: entry, command: "untag") }
        state.withLock { state in
            guard let name else {
                state.entryTags[entry.id] = nil
                return
            }
            state.entryTags[entry.id]?.removeAll { $0.name == name }
            if state.entryTags[entry.id]?.isEmpty == true { state.entryTags[entry.id] = nil }
        }
    }

    /// The tags given to the entries of `entries` that have some.
    func entryTags(of entries: [QueueEntry]) -> [Int: [EntryTag]] {
        state.withLock { state in
            guard !state.entryTags.isEmpty else { return [:] }
            return entries.reduce(into: [:]) { tags, entry in tags[entry.id] = state.entryTags[entry.id] }
        }
    }

    /// Forgets the tags of entries no longer queued (listings already leave them out: this frees their memory). On
    /// the command path, where alone entries are added and tags given: one queued since the queue was read cannot
    /// lose its tags.
    func forgetTagsOfUnqueuedEntries() {
        guard !state.withLock({ $0.entryTags.isEmpty }) else { return }
        let queued = Set(player.entries().map(\.id))
        state.withLock { $0.entryTags = $0.entryTags.filter { queued.contains($0.key) } }
    }

    /// `name` as MPD spells it, when `entry` may be given tags; an error naming what is wrong otherwise.
    private func tagName(_ name: String, of entry: QueueEntry, command: String) throws(ControlError) -> String {
        guard let spelled = MPDTags.mpdName(name) else {
            throw ControlError(
                "\(command): '\(name)' is not a tag; the tags are MPD's: \(MPDTags.mpdNames.joined(separator: ", "))")
        }
        try checkRemote(entry, command: command)
        return spelled
    }

    /// An error naming `entry` when it is a local file.
    private func checkRemote(_ entry: QueueEntry, command: String) throws(ControlError) {
        guard entry.isFile else { return }
        throw ControlError(
            "\(command): item \(entry.id) is the file \(entry.location), whose tags are its own; only a remote item "
                + "(a station, a server's file) can be given tags")
    }
}

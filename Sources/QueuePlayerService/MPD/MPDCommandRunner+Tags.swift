import QueuePlayer
import QueuePlayerControl

/// MPD's tags given to queued songs: `addtagid` and `cleartagid`, for remote songs only, as in MPD (upmpdcli names
/// the tracks it queues from a UPnP server this way). Unlike MPD's, the tags are kept with the queue across restarts.
extension MPDCommandRunner {
    /// MPD's `addtagid ID TAG VALUE`.
    func addTag(id: String, name: String, value: String) throws(MPDError) -> String {
        let (entry, spelled) = try taggable(id: id, name: name)
        return try carryOut(.tag(item: entry.id, name: spelled, value: value))
    }

    /// MPD's `cleartagid ID [TAG]`.
    func clearTags(id: String, name: String?) throws(MPDError) -> String {
        guard let name else { return try carryOut(.untag(item: try taggable(id: id).id, name: nil)) }
        let (entry, spelled) = try taggable(id: id, name: name)
        return try carryOut(.untag(item: entry.id, name: spelled))
    }

    /// The queued song `id` names and the tag `name` names (as MPD spells it), checked in MPD's order with MPD's
    /// words: the id, the tag, the song, then that it is not a local file.
    private func taggable(id: String, name: String) throws(MPDError) -> (QueueEntry, String) {
        _ = try MPDArguments.unsigned(id)
        guard let spelled = MPDTags.mpdName(name) else { throw MPDError(.argument, "Unknown tag type: \(name)") }
        return (try taggable(id: id), spelled)
    }

    /// The queued song `id` names, when it is not a local file.
    private func taggable(id: String) throws(MPDError) -> QueueEntry {
        let queue = controller.mpdState().queue
        let entry = queue[try position(ofID: id, in: queue)]
        guard !entry.isFile else { throw MPDError(.permission, "Cannot edit tags of local file") }
        return entry
    }
}

import QueuePlayer
import QueuePlayerControl

/// MPD's tags given to queued songs: `addtagid` and `cleartagid`, for remote songs only, as in MPD (upmpdcli names
/// the tracks it queues from a UPnP server this way). Unlike MPD's, the tags are kept with the queue across restarts.
extension MPDCommandRunner {
    /// MPD's `addtagid ID TAG VALUE`.
    func addTag(id: String, name: String, value: String) throws(MPDError) -> String {
        let (entry, spelled) = try taggable(id: id, name: name)
        return try carryOut(.tag(item: entry.id, name: spelled ?? name, value: value))
    }

    /// MPD's `cleartagid ID [TAG]`.
    func clearTags(id: String, name: String?) throws(MPDError) -> String {
        let (entry, spelled) = try taggable(id: id, name: name)
        return try carryOut(.untag(item: entry.id, name: spelled))
    }

    /// The queued song `id` names and the tag `name` names (as MPD spells it), checked in MPD's order with MPD's
    /// words: the id, the tag, the song, then that it is not a local file.
    private func taggable(id: String, name: String?) throws(MPDError) -> (QueueEntry, String?) {
        let number = try MPDArguments.unsigned(id)
        let spelled = try name.map { name throws(MPDError) in
            guard let spelled = MPDTags.mpdName(name) else {
                throw MPDError(.argument, "Unknown tag type: \(name)")
            }
            return spelled
        }
        let queue = controller.mpdState().queue
        guard let entry = queue.first(where: { $0.id == number }) else { throw MPDError(.noExist, "No such song") }
        guard !entry.location.hasPrefix("/") else {
            throw MPDError(.permission, "Cannot edit tags of local file")
        }
        return (entry, spelled)
    }
}

import QueuePlayer
import QueuePlayerControl

/// The commands that move playback: `play`, `playid`, `pause`, `seek`, `seekid`, `seekcur`.
extension MPDCommandRunner {
    /// MPD's `play [POS]`: plays; with a position, the song there, moved to the front of the queue (the songs before
    /// it stay queued after it, since the queue holds only the current song and those to come).
    func play(position: String?) throws(MPDError) -> String {
        guard let position else { return try carryOut(.play) }
        let queue = controller.mpdState().queue
        let index = try MPDArguments.integer(position, in: -1...Int.max)
        guard index < queue.count else { throw MPDError(.argument, "Bad song index") }
        return try play(index <= 0 ? nil : queue[index])
    }

    /// MPD's `playid [ID]`.
    func play(id: String?) throws(MPDError) -> String {
        guard let id else { return try carryOut(.play) }
        let queue = controller.mpdState().queue
        let position = try position(ofID: id, in: queue)
        return try play(position == 0 ? nil : queue[position])
    }

    /// Plays `entry` from its start, moved to the front; nil: the current song, where it is.
    private func play(_ entry: QueueEntry?) throws(MPDError) -> String {
        if let entry { _ = try carryOut(.move(entry.id, to: 1)) }
        return try carryOut(.play)
    }

    /// MPD's `pause [0|1]`: with no argument, toggles.
    func pause(_ argument: String?) throws(MPDError) -> String {
        guard let argument else { return try carryOut(.playPause) }
        return try carryOut(try MPDArguments.boolean(argument) ? .pause : .play)
    }

    /// MPD's `seek POS TIME`: the song at POS, at TIME seconds.
    func seek(position: String, to time: String) throws(MPDError) -> String {
        let queue = controller.mpdState().queue
        let index = try MPDArguments.unsigned(position)
        guard index < queue.count else { throw MPDError(.argument, "Bad song index") }
        return try seek(index == 0 ? nil : queue[index], to: try MPDArguments.seconds(time))
    }

    /// MPD's `seekid ID TIME`.
    func seek(id: String, to time: String) throws(MPDError) -> String {
        let queue = controller.mpdState().queue
        let position = try position(ofID: id, in: queue)
        return try seek(position == 0 ? nil : queue[position], to: try MPDArguments.seconds(time))
    }

    /// MPD's `seekcur TIME`: to TIME seconds, or by it with a sign (`+5`, `-5`).
    func seekCurrent(_ time: String) throws(MPDError) -> String {
        guard controller.mpdState().snapshot.status != .stopped else { throw MPDError(.playerSync, "Not playing") }
        let relative = time.hasPrefix("+") || time.hasPrefix("-")
        let seconds = try MPDArguments.seconds(time)
        return try carryOut(.position(seconds, relative: relative))
    }

    /// Plays `entry` (nil: the current song) from `seconds` into it.
    private func seek(_ entry: QueueEntry?, to seconds: Double) throws(MPDError) -> String {
        guard seconds >= 0 else { throw MPDError(.argument, "Negative position: \(seconds)") }
        if let entry { _ = try carryOut(.move(entry.id, to: 1)) }
        _ = try carryOut(.position(seconds, relative: false))
        return try carryOut(.play)
    }
}

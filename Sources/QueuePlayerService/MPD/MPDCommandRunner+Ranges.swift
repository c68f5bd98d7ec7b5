import FoundationEssentials
import QueuePlayer
import QueuePlayerControl

/// MPD's `rangeid`: a queued song plays a part of itself in place of the whole, and lists it as `Range`. Unlike MPD's,
/// the parts are kept with the queue across restarts.
extension MPDCommandRunner {
    /// MPD's `rangeid ID START:END` (seconds; START left out is the song's start, END its end, both the whole song),
    /// checked in MPD's order with MPD's words: the id, the range, the song, that it is not the one playing, then
    /// that START is within the song when its length is known (an END past it is the song's end).
    func setRange(id: String, range text: String) throws(MPDError) -> String {
        _ = try MPDArguments.unsigned(id)
        let (start, end) = try Self.timeRange(text)
        let state = controller.mpdState()
        let entry = state.queue[try position(ofID: id, in: state.queue)]
        if state.snapshot.status != .stopped, state.snapshot.current?.id == entry.id {
            throw MPDError(.permission, "Cannot edit the current song")
        }
        var until = end
        if let length = indexedLength(of: entry) {
            guard start <= length else { throw MPDError(.argument, "Invalid start offset") }
            if let end, end >= length { until = nil }
        }
        let whole = start == 0 && until == nil
        return try carryOut(.range(item: entry.id, start: whole ? nil : start, end: until))
    }

    /// A `START:END` range as MPD reads one: either side may be empty; each is seconds, counted in whole
    /// milliseconds; END, when given, after START.
    static func timeRange(_ text: String) throws(MPDError) -> (start: Double, end: Double?) {
        let sides = text.split(separator: ":", omittingEmptySubsequences: false)
        guard sides.count == 2 else { throw MPDError(.argument, "Bad range") }
        func seconds(_ side: Substring) throws(MPDError) -> Double? {
            guard !side.isEmpty else { return nil }
            guard let value = Double(side), value.isFinite, value >= 0 else { throw MPDError(.argument, "Bad range") }
            return (value * 1000).rounded(.towardZero) / 1000
        }
        let start = try seconds(sides[0]) ?? 0
        let end = try seconds(sides[1])
        if let end, end <= start { throw MPDError(.argument, "Bad range") }
        return (start, end)
    }

    /// The `Range` line of a song playing `range` of itself: its start and end in seconds, the end empty when open.
    static func rangeLine(_ range: MediaTimeRange) -> String {
        let end = range.end.isNumeric ? fixedDecimals(range.end.seconds, places: 3) : ""
        return "Range: \(fixedDecimals(range.start.seconds, places: 3))-\(end)\n"
    }

    /// The length of the part `range` names of a song `seconds` long.
    static func length(of range: MediaTimeRange, inSongOf seconds: Double) -> Double {
        let end = range.end.isNumeric ? min(range.end.seconds, seconds) : seconds
        return max(0, end - min(range.start.seconds, seconds))
    }

    /// The length of `entry`'s file as the music folder's index knows it; nil for a song it does not hold.
    private func indexedLength(of entry: QueueEntry) -> Double? {
        guard entry.isFile, let songs = index?.current.songs else { return nil }
        return songs[musicFolder.name(of: entry.location)]?.seconds
    }
}

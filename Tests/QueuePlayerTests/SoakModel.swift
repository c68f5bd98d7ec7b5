import Foundation
import TestSupport

@testable import QueuePlayer

/// A file the soak queues, with what playing it must sound like: its reference decode (`mpg123 -w`), or nil for a
/// file that cannot be played (it must fail alone, heard as nothing).
struct SoakFile: Sendable {
    let name: String
    let url: URL
    let sampleRate: Int
    let isMono: Bool
    /// Interleaved stereo; nil when the file fails to open.
    let reference: [Float]?

    var frameCount: Int { (reference?.count ?? 0) / Renderer.channelCount }
    var plays: Bool { reference != nil }

    /// The fixtures the soak draws from: joins, a long item, mono, a 48 kHz item (the stream is reopened at each
    /// change of rate), and two files that fail (text, empty).
    static func catalog() throws -> [SoakFile] {
        let playable = ["join-1", "join-2", "join-3", "stereo-44k-5s", "mono-44k", "stereo-48k"].map { name in
            (name, Result { try WAVFile(contentsOf: Fixtures.directory.appendingPathComponent("\(name).f32.wav")) })
        }
        var files = try playable.map { name, wav in
            let wav = try wav.get()
            return SoakFile(
                name: name, url: Fixtures.mp3(name), sampleRate: wav.sampleRate, isMono: wav.channelCount == 1,
                reference: try wav.stereoFloatSamples())
        }
        for name in ["not-audio", "empty"] {
            files.append(SoakFile(name: name, url: Fixtures.mp3(name), sampleRate: 0, isMono: false, reference: nil))
        }
        return files
    }
}

/// An entry of the model's queue: the item handed to the player, and its file.
struct SoakEntry {
    let item: PlayerItem
    let file: SoakFile
}

/// What the player must show after every step of the soak, kept by simple rules: the queue, the current item, the
/// frame heard of the first entry, the rate, the volume, and the history `previous` goes back through. It also
/// checks every frame the sink renders against the reference decode of the item the model says is playing.
struct SoakModel {
    struct Mismatch: Error, CustomStringConvertible {
        var description: String
    }

    var queue: [SoakEntry] = []
    /// The item the player made current (by a command, or by starting to play it), if it is not simply the first
    /// queued one: an item heard to its end stays current until the next starts.
    var explicitCurrent: PlayerItem?
    /// Frames heard of `queue.first`.
    var position = 0
    var isPlaying = false
    var volume: Float = 1
    var isInBackground = false
    var history: [SoakFile] = []
    /// How far a sample of a mono file may be from the reference; stereo files must be bit-exact. Decoding a mono
    /// file into stereo, libmpg123 resumes after a seek (a `seek`, or an edit that re-decodes from the frame heard)
    /// with samples that differ from a decode from the start in the last bit or two (at most 1.8e-7, about
    /// -135 dBFS, in these runs), to the item's end. A frame heard twice or skipped differs by far more in these
    /// fixtures, which never fall silent.
    static let monoTolerance: Float = 1e-6
    /// Samples of mono files that were not bit-exact (within ``monoTolerance``), and the largest difference.
    private(set) var inexactSamples = 0
    private(set) var largestDifference: Float = 0
    /// Frames rendered so far, and the same in seconds of audio.
    private(set) var framesHeard = 0
    private(set) var secondsHeard = 0.0

    /// The player's current item as the model has it.
    var currentItem: PlayerItem? { explicitCurrent ?? queue.first?.item }

    /// What the player shows, for comparison with ``SoakPicture``.
    var picture: SoakPicture {
        SoakPicture(
            items: queue.map { ObjectIdentifier($0.item) }, currentItem: currentItem.map(ObjectIdentifier.init),
            rate: isPlaying ? 1 : 0)
    }

    /// The frame heard of the current item and its rate; (0, nil) when there is none.
    var expectedTime: (frame: Int, sampleRate: Int?) {
        guard let first = queue.first, currentItem === first.item else { return (0, nil) }
        return (position, first.file.sampleRate)
    }

    /// Frames that can be heard before the queue ends (0 while paused).
    var framesLeft: Int {
        guard isPlaying else { return 0 }
        return queue.reduce(0) { $0 + $1.file.frameCount } - position
    }

    /// How many frames to render for a step of about `wanted` frames: no more than are left, and never ending
    /// exactly at the end of an item that another follows (there, which item is current is a matter of a frame).
    func stepLength(about wanted: Int) -> Int {
        let length = min(wanted, framesLeft)
        guard length > 0, length < framesLeft else { return length }
        var end = -position
        for entry in queue {
            end += entry.file.frameCount
            if end == length { return length + 1 }
            if end > length { break }
        }
        return length
    }

    // MARK: Commands, as QueuePlayer defines them

    mutating func play() { isPlaying = true }

    mutating func pause() { isPlaying = false }

    /// A seek of the current item (which must be the first queued, and playable) to `frame`.
    mutating func seek(toFrame frame: Int) {
        position = frame
    }

    /// `advanceToNextItem`: the first entry goes into the history, the next is current at once.
    mutating func next() {
        guard let left = queue.first else { return }
        remember(left.file)
        queue.removeFirst()
        position = 0
        explicitCurrent = queue.first?.item
        dropFailuresAtFront()
    }

    /// `returnToPreviousItem`, with `previous` the item the player made for the newest file of the history (when
    /// the history and the queue are not empty).
    mutating func returnToPrevious(made previous: () throws -> PlayerItem) rethrows {
        guard let file = history.last else {
            position = 0
            return
        }
        history.removeLast()
        // A file that cannot be played fails at once, and its item with it: which item it was does not matter.
        let entry = SoakEntry(item: file.plays ? try previous() : PlayerItem(url: file.url), file: file)
        if queue.isEmpty {
            queue = [entry]
            isPlaying = true
        } else {
            queue.insert(entry, at: 0)
            explicitCurrent = entry.item
        }
        position = 0
        dropFailuresAtFront()
    }

    mutating func insert(_ entry: SoakEntry, at index: Int) {
        queue.insert(entry, at: index)
        dropFailuresAtFront()
    }

    mutating func remove(at index: Int) {
        queue.remove(at: index)
        guard index == 0 else { return }
        position = 0
        explicitCurrent = queue.first?.item
        dropFailuresAtFront()
    }

    /// `move(_:to:)`: a new first entry plays from its start and is current at once.
    mutating func move(from index: Int, to target: Int) {
        let first = queue.first?.item
        let entry = queue.remove(at: index)
        queue.insert(entry, at: min(max(0, target), queue.count))
        startFirstUnlessStill(first)
    }

    /// The queue in `order` (positions of the queue now, each once).
    mutating func rearrange(_ order: [Int]) {
        let first = queue.first?.item
        queue = order.map { queue[$0] }
        startFirstUnlessStill(first)
    }

    /// After an edit of the order: a new first item is current at once, from its start.
    private mutating func startFirstUnlessStill(_ first: PlayerItem?) {
        guard queue.first?.item !== first else { return }
        position = 0
        explicitCurrent = queue.first?.item
        dropFailuresAtFront()
    }

    mutating func clear() {
        queue = []
        position = 0
        explicitCurrent = nil
    }

    /// Entering the background without the audio mode pauses; coming back does not resume (as on iOS).
    mutating func enterBackground() {
        guard !isInBackground else { return }
        isInBackground = true
        isPlaying = false
    }

    mutating func enterForeground() { isInBackground = false }

    // MARK: Hearing

    /// Takes `samples` (interleaved stereo at `sampleRate`) as heard next: they must be the next frames of the items
    /// the model has queued, from its position, at the volume set. Moves the position, finishing items on the way.
    mutating func hear(_ samples: UnsafeBufferPointer<Float>, sampleRate: Int) throws {
        var offset = 0
        while offset < samples.count {
            dropFailuresAtFront()
            guard let first = queue.first, let reference = first.file.reference else {
                throw Mismatch(description: "heard \((samples.count - offset) / 2) frames past the end of the queue")
            }
            guard sampleRate == first.file.sampleRate else {
                throw Mismatch(description: "\(first.file.name) heard at \(sampleRate) Hz")
            }
            let frames = min((samples.count - offset) / 2, first.file.frameCount - position)
            let start = position * 2
            for index in 0..<(frames * 2) where samples[offset + index] != reference[start + index] * volume {
                let difference = abs(samples[offset + index] - reference[start + index] * volume)
                guard first.file.isMono, difference <= Self.monoTolerance else {
                    throw Mismatch(
                        description: "\(first.file.name) frame \(position + index / 2): heard "
                            + "\(samples[offset + index]), expected \(reference[start + index] * volume) "
                            + "(volume \(volume))")
                }
                inexactSamples += 1
                largestDifference = max(largestDifference, difference)
            }
            offset += frames * 2
            position += frames
            framesHeard += frames
            secondsHeard += Double(frames) / Double(sampleRate)
            explicitCurrent = first.item
            if position == first.file.frameCount {
                finishFirst()
            }
        }
    }

    /// The first entry was heard to its end (or failed): it goes into the history; with nothing after it, the
    /// queue has finished and there is no current item.
    private mutating func finishFirst() {
        remember(queue.removeFirst().file)
        position = 0
        dropFailuresAtFront()
        if queue.isEmpty { explicitCurrent = nil }
    }

    /// Files that cannot be played fail as soon as the player reaches them, playing or paused; a failed current
    /// item leaves its place to the next at once.
    mutating func dropFailuresAtFront() {
        while let first = queue.first, !first.file.plays {
            remember(queue.removeFirst().file)
            if explicitCurrent === first.item || queue.isEmpty { explicitCurrent = queue.first?.item }
        }
    }

    private mutating func remember(_ file: SoakFile) {
        history.append(file)
        if history.count > QueuePlayer.historyLimit { history.removeFirst() }
    }
}

/// The part of the player's state the soak compares with its model after every step.
struct SoakPicture: Equatable, Sendable {
    var items: [ObjectIdentifier]
    var currentItem: ObjectIdentifier?
    var rate: Float
}

extension QueuePlayer {
    /// The player's queue, current item and rate, for the soak.
    var soakPicture: SoakPicture {
        SoakPicture(
            items: items().map(ObjectIdentifier.init), currentItem: currentItem.map(ObjectIdentifier.init), rate: rate)
    }
}

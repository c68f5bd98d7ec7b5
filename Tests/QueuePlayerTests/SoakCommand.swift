import Foundation

@testable import QueuePlayer

/// The commands the soak gives, each applied to the player and to the model alike.
enum SoakCommand: String, CaseIterable, Hashable {
    case play, pause, seek, next, previous, add, insert, remove, move, rearrange, clear, background, foreground, volume

    /// How often each is drawn, against the others.
    private var weight: Int {
        switch self {
        case .play: 8
        case .pause: 5
        case .seek, .add, .insert: 8
        case .next, .remove, .move: 6
        case .previous, .volume, .rearrange: 4
        case .background, .foreground: 3
        case .clear: 1
        }
    }

    /// Draws the next command. Playback resumes soon after a pause and the queue stays between 2 and 10 items
    /// most of the time, so that most of the run is audio; every command still comes in every state.
    static func next(for model: SoakModel, using random: inout SeededGenerator) -> SoakCommand {
        if !model.isPlaying, Int.random(in: 0..<3, using: &random) == 0 { return .play }
        if model.queue.count < 2, Int.random(in: 0..<2, using: &random) == 0 { return .add }
        if model.queue.count > 10 { return .remove }
        var pick = Int.random(in: 0..<allCases.reduce(0) { $0 + $1.weight }, using: &random)
        for command in allCases {
            if pick < command.weight { return command }
            pick -= command.weight
        }
        return .play
    }

    /// Gives the command to `player` and `model`, drawing its arguments from `random`, and returns what was done
    /// in words (for the digest and for failures).
    func apply(
        to player: QueuePlayer, model: inout SoakModel, application: Application, files: [SoakFile],
        using random: inout SeededGenerator
    ) throws -> String {
        func newEntry() -> SoakEntry {
            // Now and then a file that cannot be played: it must fail alone.
            let file =
                Int.random(in: 0..<12, using: &random) == 0
                ? files.filter { !$0.plays }.randomElement(using: &random)!
                : files.filter(\.plays).randomElement(using: &random)!
            return SoakEntry(item: PlayerItem(url: file.url), file: file)
        }
        switch self {
        case .play:
            player.play()
            model.play()
        case .pause:
            player.pause()
            model.pause()
        case .seek:
            guard let first = model.queue.first, first.file.plays, model.currentItem === first.item else {
                return "seek (no item to seek)"
            }
            let frame = Int.random(in: 0..<first.file.frameCount, using: &random)
            player.seek(to: MediaTime(value: Int64(frame), timescale: Int32(first.file.sampleRate)))
            model.seek(toFrame: frame)
            return "seek \(first.file.name) to frame \(frame)"
        case .next:
            player.advanceToNextItem()
            model.next()
        case .previous:
            let file = model.history.last?.name ?? "nothing"
            player.returnToPreviousItem()
            // The item the player made for the file: current at once (also when it then fails to open).
            try model.returnToPrevious {
                guard let item = player.currentItem else { throw SoakModel.Mismatch(description: "previous: no item") }
                return item
            }
            return "previous (\(file))"
        case .add:
            let entry = newEntry()
            player.insert(entry.item, after: nil)
            model.insert(entry, at: model.queue.count)
            return "add \(entry.file.name)"
        case .insert:
            guard !model.queue.isEmpty else { return "insert (empty queue)" }
            let index = Int.random(in: model.queue.indices, using: &random)
            let entry = newEntry()
            player.insert(entry.item, after: model.queue[index].item)
            model.insert(entry, at: index + 1)
            return "insert \(entry.file.name) after \(index)"
        case .remove:
            guard !model.queue.isEmpty else { return "remove (empty queue)" }
            let index = Int.random(in: model.queue.indices, using: &random)
            guard Bool.random(using: &random) else {
                player.remove(model.queue[index].item)
                model.remove(at: index)
                return "remove \(index)"
            }
            // Several in one change: those after the first removed first, then the first, if it is among them.
            let indices = Set((0..<3).map { _ in Int.random(in: model.queue.indices, using: &random) }).sorted(by: >)
            player.remove(indices.compactMap { player.entry(for: model.queue[$0].item) })
            for index in indices { model.remove(at: index) }
            return "remove \(indices)"
        case .move:
            guard model.queue.count >= 2 else { return "move (fewer than two items)" }
            let from = Int.random(in: model.queue.indices, using: &random)
            let to = (from + Int.random(in: 1..<model.queue.count, using: &random)) % model.queue.count
            guard let entry = player.entry(for: model.queue[from].item), player.move(entry, to: to) else {
                throw SoakModel.Mismatch(description: "move: \(model.queue[from].file.name) is not queued")
            }
            model.move(from: from, to: to)
            return "move \(from) to \(to)"
        case .rearrange:
            guard model.queue.count >= 2 else { return "rearrange (fewer than two items)" }
            var order = Array(model.queue.indices)
            // Half the time the first stays first: the current item plays on unbroken, the rest in a new order.
            if Bool.random(using: &random) {
                order[1...].shuffle(using: &random)
            } else {
                order.shuffle(using: &random)
            }
            let entries = order.compactMap { player.entry(for: model.queue[$0].item) }
            guard player.rearrange(entries) else {
                throw SoakModel.Mismatch(description: "rearrange \(order): the player's queue is not the model's")
            }
            model.rearrange(order)
            return "rearrange \(order)"
        case .clear:
            player.removeAllItems()
            model.clear()
        case .background:
            // Only from the foreground while playing: the pause it causes comes on the policy's queue, and the
            // next command must not overtake it (the settle waits for the rate to drop).
            guard !model.isInBackground, model.isPlaying else {
                application.enterForeground()
                model.enterForeground()
                return "foreground (instead of background)"
            }
            application.enterBackground()
            model.enterBackground()
        case .foreground:
            application.enterForeground()
            model.enterForeground()
        case .volume:
            let volume = [Float(1), 0.5, 0.25, 0.75].randomElement(using: &random)!
            player.volume = volume
            model.volume = volume
            return "volume \(volume)"
        }
        return rawValue
    }
}

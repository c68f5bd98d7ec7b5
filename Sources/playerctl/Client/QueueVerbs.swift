import ArgumentParser
import QueuePlayerControl

struct OpenVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Play URI (a file path, file:// URI or http(s) URL) now; the rest of the queue follows.")
    @OptionGroup var options: ClientOptions
    @Argument(help: ArgumentHelp("The file to play.", valueName: "uri")) var uri: String

    func run() throws {
        _ = try options.call(ControlRequest(.open(absolutePath(uri))))
    }
}

struct AddVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Append files or folders to the queue; prints the ids they got.")
    @OptionGroup var options: ClientOptions
    @Argument(
        help: ArgumentHelp(
            "MP3 files or http(s) URLs, folders, playlists (.m3u, .m3u8, .pls: files or URLs), podcast feeds.",
            valueName: "item"))
    var items: [String]
    @Flag(help: "Leave out podcast episodes already played to their end (or to within their last minute).")
    var unplayed = false

    func run() throws {
        let request = ControlRequest(.add(items.map(absolutePath), unplayed: unplayed))
        for id in try options.call(request).added ?? [] { print(id) }
    }
}

struct InsertVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "insert", abstract: "Insert files or folders after the queued item ID; prints their ids.")
    @OptionGroup var options: ClientOptions
    @Option(help: ArgumentHelp("The id (from `playerctl queue`) to insert after.", valueName: "id")) var after: Int
    @Argument(
        help: ArgumentHelp(
            "MP3 files or http(s) URLs, folders, playlists (.m3u, .m3u8, .pls: files or URLs).", valueName: "item"))
    var items: [String]

    func run() throws {
        let request = ControlRequest(.insert(items.map(absolutePath), after: after))
        for id in try options.call(request).added ?? [] { print(id) }
    }
}

struct RemoveVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove the queued items ID..., in one change (the current one: play the next that stays).")
    @OptionGroup var options: ClientOptions
    @Argument(help: ArgumentHelp("The ids, from `playerctl queue`.", valueName: "id")) var ids: [Int]

    func validate() throws {
        guard !ids.isEmpty else { throw ValidationError("name at least one queued item by its id") }
    }

    func run() throws {
        _ = try options.call(ControlRequest(.remove(ids)))
    }
}

struct MoveVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move", abstract: "Move the queued item ID to position POS (1 is the current item).")
    @OptionGroup var options: ClientOptions
    @Argument(help: ArgumentHelp("The id, from `playerctl queue`.", valueName: "id")) var id: Int
    @Option(help: ArgumentHelp("The new position, counting the current item as 1.", valueName: "pos")) var to: Int

    func run() throws {
        _ = try options.call(ControlRequest(.move(id, to: to)))
    }
}

struct PriorityVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "priority",
        abstract: "Give the queued items ID... a priority: while shuffled, higher priorities play first (MPD's prio).")
    @OptionGroup var options: ClientOptions
    @Argument(help: ArgumentHelp("0 (the default) to 255.", valueName: "priority")) var priority: Int
    @Argument(help: ArgumentHelp("The ids, from `playerctl queue`.", valueName: "id")) var ids: [Int]

    func validate() throws {
        guard (0...255).contains(priority) else { throw ValidationError("priority must be from 0 to 255") }
        guard !ids.isEmpty else { throw ValidationError("name at least one queued item by its id") }
    }

    func run() throws {
        _ = try options.call(ControlRequest(.priority(priority, ids: ids)))
    }
}

struct TagVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tag",
        abstract: "Give the queued remote item ID a tag, shown while it sends none of its own (MPD's addtagid).")
    @OptionGroup var options: ClientOptions
    @Argument(help: ArgumentHelp("The id, from `playerctl queue`.", valueName: "id")) var id: Int
    @Argument(help: ArgumentHelp("A tag as MPD names it: Title, Artist, Album, Name...", valueName: "tag"))
    var name: String
    @Argument(help: ArgumentHelp("Its text.", valueName: "value")) var value: String

    func run() throws {
        _ = try options.call(ControlRequest(.tag(item: id, name: name, value: value)))
    }
}

struct UntagVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "untag",
        abstract: "Take back the tags given to the queued item ID: those named TAG, or all (MPD's cleartagid).")
    @OptionGroup var options: ClientOptions
    @Argument(help: ArgumentHelp("The id, from `playerctl queue`.", valueName: "id")) var id: Int
    @Argument(help: ArgumentHelp("A tag as MPD names it; every tag given when left out.", valueName: "tag"))
    var name: String?

    func run() throws {
        _ = try options.call(ControlRequest(.untag(item: id, name: name)))
    }
}

struct RangeVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "range",
        abstract: "Make the queued item ID play only a part of itself, in place of the whole (MPD's rangeid).",
        discussion: "With neither --from nor --to the item plays whole again. Not for the current item while playing.")
    @OptionGroup var options: ClientOptions
    @Argument(help: ArgumentHelp("The id, from `playerctl queue`.", valueName: "id")) var id: Int
    @Option(help: ArgumentHelp("Seconds into the item where the part begins (its start when left out).")) var from:
        Double?
    @Option(help: ArgumentHelp("Seconds into the item where the part ends (its end when left out).")) var to: Double?

    func run() throws {
        _ = try options.call(ControlRequest(.range(item: id, start: from, end: to)))
    }
}

struct QueueVerb: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "List the queue: id and file, the current item marked '*', where an episode resumes, priorities.")
    @OptionGroup var options: ClientOptions

    func run() throws {
        for line in try options.call(ControlRequest(.queue)).queue ?? [] {
            let start = line.startsAt.map { "\tfrom \(Self.time($0))" } ?? ""
            let priority = line.priority.map { "\tpriority \($0)" } ?? ""
            let range =
                line.rangeStart.map { "\tplays \(Self.time($0))-\(line.rangeEnd.map(Self.time) ?? "end")" } ?? ""
            print("\(line.current ? "*" : " ") \(line.id)\t\(line.url)\(start)\(priority)\(range)")
        }
    }

    /// `seconds` as the standard playerctl writes a time.
    private static func time(_ seconds: Double) -> String {
        MetadataTemplate.duration(Int64(seconds * 1_000_000))
    }
}

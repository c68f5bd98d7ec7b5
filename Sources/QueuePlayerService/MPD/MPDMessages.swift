import Synchronization

/// MPD's client-to-client messages: the channels each connection subscribed to, and the messages sent to them, kept
/// for each subscriber until it reads them, within mpd's bounds (16 channels and 64 unread messages a client).
///
/// Threading: any thread; a client is told `message` on whatever thread sent it, outside the lock.
package final class MPDMessages: Sendable {
    /// The most channels one client subscribes to (mpd's).
    package static let maximumSubscriptions = 16
    /// The most messages one client leaves unread; more are not kept for it (mpd's).
    package static let maximumUnread = 64

    /// One client's side: what ``MPDCommandRunner`` carries out its commands with.
    package struct Mailbox: Sendable {
        let messages: MPDMessages
        let id: Int

        /// Tells `tell` of each message that comes while none waited unread (MPD's idle `message`).
        package func connect(_ tell: @escaping @Sendable (MPDSubsystems) -> Void) {
            messages.clients.withLock { $0[id]?.tell = tell }
        }

        /// Forgets the client, its subscriptions and unread messages: its connection closed. As in mpd, the
        /// subscriptions it ends are not told.
        package func close() {
            _ = messages.clients.withLock { $0.removeValue(forKey: id) }
        }
    }

    private struct Client {
        var channels: Set<String> = []
        var unread: [(channel: String, text: String)] = []
        var tell: (@Sendable (MPDSubsystems) -> Void)?
    }

    /// Where subscriptions coming and going are told (MPD's idle `subscription`, to every client).
    private let feed: MPDChangeFeed
    private let clients = Mutex<[Int: Client]>([:])
    private let lastID = Atomic(0)

    package init(feed: MPDChangeFeed) {
        self.feed = feed
    }

    /// A mailbox for a new client.
    package func mailbox() -> Mailbox {
        let id = lastID.add(1, ordering: .relaxed).newValue
        clients.withLock { $0[id] = Client() }
        return Mailbox(messages: self, id: id)
    }

    /// MPD's `subscribe`.
    func subscribe(_ mailbox: Mailbox, to channel: String) throws(MPDError) {
        guard Self.isValid(channel) else { throw MPDError(.argument, "invalid channel name") }
        try clients.withLock { clients throws(MPDError) in
            guard var client = clients[mailbox.id] else { return }
            guard client.channels.count < Self.maximumSubscriptions else {
                throw MPDError(.exist, "subscription list is full")
            }
            guard client.channels.insert(channel).inserted else {
                throw MPDError(.exist, "already subscribed to this channel")
            }
            clients[mailbox.id] = client
        }
        feed.tell([.subscription])
    }

    /// MPD's `unsubscribe`.
    func unsubscribe(_ mailbox: Mailbox, from channel: String) throws(MPDError) {
        let removed = clients.withLock { $0[mailbox.id]?.channels.remove(channel) != nil }
        guard removed else { throw MPDError(.noExist, "not subscribed to this channel") }
        feed.tell([.subscription])
    }

    /// MPD's `channels`: every channel some client subscribes to, in byte order.
    func channels() -> [String] {
        let all = clients.withLock { $0.values.reduce(into: Set<String>()) { $0.formUnion($1.channels) } }
        return all.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// MPD's `readmessages`: the client's unread messages, oldest first, which are then read.
    func read(_ mailbox: Mailbox) -> [(channel: String, text: String)] {
        clients.withLock { clients in
            defer { clients[mailbox.id]?.unread = [] }
            return clients[mailbox.id]?.unread ?? []
        }
    }

    /// MPD's `sendmessage`: `text` kept for every subscriber of `channel` with room for it; "nobody is subscribed to
    /// this channel" when none took it.
    func send(_ text: String, to channel: String) throws(MPDError) {
        guard Self.isValid(channel) else { throw MPDError(.argument, "invalid channel name") }
        let (taken, told) = clients.withLock { clients in
            var taken = false
            var told: [@Sendable (MPDSubsystems) -> Void] = []
            for (id, client) in clients
            where client.channels.contains(channel) && client.unread.count < Self.maximumUnread {
                taken = true
                if client.unread.isEmpty, let tell = client.tell { told.append(tell) }
                clients[id]?.unread.append((channel, text))
            }
            return (taken, told)
        }
        guard taken else { throw MPDError(.noExist, "nobody is subscribed to this channel") }
        for tell in told { tell([.message]) }
    }

    /// A channel's name as mpd allows it: letters and digits of ASCII, `_`, `-`, `.` and `:`, at least one.
    private static func isValid(_ channel: String) -> Bool {
        !channel.isEmpty && channel.utf8.allSatisfy(channelBytes.contains)
    }

    private static let channelBytes = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:".utf8)
}

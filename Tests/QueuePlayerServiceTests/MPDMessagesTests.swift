import QueuePlayerService
import Synchronization
import TestTiers
import Testing

/// MPD's client-to-client messages between two clients of one daemon core, in-process: mpd's answers, its bounds,
/// and who is told what (read from Debian's mpd 0.23.12 and its source).
@Suite("MPD's client-to-client messages", .tier(.deterministic), .timeLimit(.minutes(1)))
struct MPDMessagesTests {
    @Test("a message waits for each subscriber until it reads it; subscriptions are told to all, messages to each")
    func messages() throws {
        let service = try ServiceHarness()
        let feed = MPDChangeFeed()
        let messages = MPDMessages(feed: feed)
        let readerMailbox = messages.mailbox()
        let reader = MPDTestClient(of: service, feed: feed, mailbox: readerMailbox)
        let sender = MPDTestClient(of: service, feed: feed, mailbox: messages.mailbox())
        let toldAll = Mutex<[MPDSubsystems]>([])
        let toldReader = Mutex<[MPDSubsystems]>([])
        _ = feed.add { changed in toldAll.withLock { $0.append(changed) } }
        readerMailbox.connect { changed in toldReader.withLock { $0.append(changed) } }

        #expect(reader.run("channels") == "OK\n")
        #expect(reader.run("subscribe news") == "OK\n")
        #expect(toldAll.withLock { $0 } == [.subscription])
        #expect(sender.run("subscribe other", "subscribe news") == "OK\n")
        #expect(reader.run("channels") == "channel: news\nchannel: other\nOK\n")
        #expect(sender.run("sendmessage news hello", "sendmessage news again") == "OK\n")
        #expect(toldReader.withLock { $0 } == [.message], "told once: a message came while none waited")
        #expect(reader.run("readmessages") == "channel: news\nmessage: hello\nchannel: news\nmessage: again\nOK\n")
        #expect(reader.run("readmessages") == "OK\n")
        #expect(sender.run("readmessages").hasPrefix("channel: news\nmessage: hello\n"), "the sender subscribes too")

        for (line, answer) in [
            ("subscribe news", "ACK [56@0] {subscribe} already subscribed to this channel"),
            ("subscribe bad/name", "ACK [2@0] {subscribe} invalid channel name"),
            (#"subscribe """#, "ACK [2@0] {subscribe} invalid channel name"),
            ("unsubscribe nope", "ACK [50@0] {unsubscribe} not subscribed to this channel"),
            ("sendmessage nobody x", "ACK [50@0] {sendmessage} nobody is subscribed to this channel"),
            ("sendmessage bad/name x", "ACK [2@0] {sendmessage} invalid channel name"),
        ] {
            #expect(reader.run(line) == answer + "\n", "\(line)")
        }
        for number in 2...MPDMessages.maximumSubscriptions { #expect(reader.run("subscribe c:\(number)") == "OK\n") }
        #expect(reader.run("subscribe one-more") == "ACK [56@0] {subscribe} subscription list is full\n")

        #expect(sender.run("unsubscribe news") == "OK\n")
        for number in 1...MPDMessages.maximumUnread { #expect(sender.run("sendmessage news m\(number)") == "OK\n") }
        let dropped = sender.run("sendmessage news dropped")
        #expect(dropped == "ACK [50@0] {sendmessage} nobody is subscribed to this channel\n", "the reader's are full")
        let unread = reader.run("readmessages")
        #expect(unread.hasSuffix("message: m\(MPDMessages.maximumUnread)\nOK\n") && !unread.contains("dropped"))

        readerMailbox.close()
        #expect(sender.run("channels") == "channel: other\nOK\n", "a closed connection's subscriptions end with it")
    }
}

/// When a remote item that its server has answered is asked for again after losing it, and when it is given up: one
/// policy for every way the sound stops coming (a dropped or reset connection, a body that ends early, a server that
/// refuses or cannot be reached, a read timeout, an error status such as Icecast's 404 while its source is away).
///
/// - A loss lasts until bytes of the item come again. Within it the waits grow from ``firstWait``, doubling, to
///   ``longestWait``, each drawn from the last quarter below its value (jitter), so that players that lost one
///   server do not all come back to it in step.
/// - A live stream is never given up: it is asked for as long as it is the item being played (a skip or a stop ends
///   the fetch). A router that reboots takes minutes; the station is heard again within ``longestWait`` of
///   answering.
/// - A finite item (a podcast episode, a file) is given up once no byte of it has arrived for ``finiteItemPatience``,
///   and fails alone, naming its URL; the queue goes on.
/// - An item whose server has never answered (a box that starts before its network, a server restarting) may be
///   either: it is asked for until it answers while nothing is queued after it, and for ``unansweredItemPatience``
///   while something is, then fails alone, so that one dead server among many does not hold the queue.
///
/// No clock of its own: the caller says how long the item has been lost. Pure; any thread.
enum ReconnectPolicy {
    /// The first wait after a loss.
    static let firstWait = Duration.milliseconds(100)
    /// The longest wait between two attempts: 2 s. A station back from an outage is heard again at most this long
    /// after it answers (plus its buffering); in exchange, a server that stays down is asked about once every 2 s
    /// by each player, not several times a second.
    static let longestWait = Duration.seconds(2)
    /// How long a finite item may go without a byte before it is given up: 60 s, long enough for a server or a
    /// router to restart, short enough that a queue with a dead server in it goes on.
    static let finiteItemPatience = Duration.seconds(60)
    /// How long an item whose server has never answered is asked for while something is queued after it: 10 s,
    /// enough for a lookup or a connection that fails for a moment, short enough that a dead URL in a queue of
    /// podcasts is passed over soon.
    static let unansweredItemPatience = Duration.seconds(10)

    /// What is known of the item that was lost.
    enum Item: Equatable {
        /// A live stream that answered: never given up.
        case live
        /// A finite item that answered: given up after ``finiteItemPatience``.
        case finite
        /// An item that has not answered yet, and whether anything is queued after it.
        case unanswered(hasItemAfter: Bool)
    }

    /// What to do after a failed attempt.
    enum Decision: Equatable {
        /// Wait this long, then ask again.
        case retry(after: Duration)
        /// Give the item up: it fails alone.
        case giveUp
    }

    /// After the `failures`th failed attempt in a row (from 1) of `item`, lost for `lostFor`: `jitter` in 0...1 picks
    /// the wait within its last quarter (1: the full wait).
    static func decide(failures: Int, lostFor: Duration, item: Item, jitter: Double) -> Decision {
        switch item {
        case .live, .unanswered(hasItemAfter: false): break
        case .finite: if lostFor >= finiteItemPatience { return .giveUp }
        case .unanswered(hasItemAfter: true): if lostFor >= unansweredItemPatience { return .giveUp }
        }
        let doublings = min(max(failures - 1, 0), 16)
        let nominal = min(firstWait * (1 << doublings), longestWait)
        return .retry(after: nominal * (0.75 + 0.25 * min(max(jitter, 0), 1)))
    }
}

import Dispatch
import FoundationEssentials
import Glibc
import QueuePlayerControl
import Synchronization

/// Snapcast's stream plugin for the daemon: snapserver runs it (its `controlscript`) and speaks JSON-RPC 2.0 with it,
/// one object a line, on its standard input and output. Requests from Snapcast's clients (play, pause, next, seek,
/// volume) become requests on the daemon's control socket; the daemon's states, followed by a subscription, become
/// `Plugin.Stream.Player.Properties` notifications whenever they say something new.
///
/// Threading: requests are read and answered on the calling thread; states arrive on the control client's event
/// loop. Both write whole lines under one lock, and the last properties sent are kept under another.
final class SnapcastPlugin: Sendable {
    private let client: ControlClient
    private let output = Mutex<Void>(())
    private let sent = Mutex<(properties: SnapcastProperties?, at: ContinuousClock.Instant)>((nil, .now))
    private let daemonGone = DispatchSemaphore(value: 0)

    /// A plugin for the daemon `client` talks to.
    init(client: ControlClient) {
        self.client = client
    }

    /// Tells snapserver the plugin is ready, follows the daemon on another thread, and answers requests until
    /// snapserver closes standard input; then exits.
    func run() -> Never {
        write(Notification<SnapcastProperties>(method: "Plugin.Stream.Ready"))
        DispatchQueue.global().async { [self] in followDaemon() }
        while let line = readLine() {
            answer(line)
        }
        exit(0)
    }

    /// Follows the daemon's states; while no daemon answers, tells snapserver so and looks again every second.
    private func followDaemon() {
        while true {
            try? client.follow { [self] state in publish(state) }
            publish(nil)
            _ = daemonGone.wait(timeout: .now() + .seconds(1))
        }
    }

    private func answer(_ line: String) {
        guard let request = try? JSONDecoder().decode(SnapcastPluginRequest.self, from: Data(line.utf8)) else {
            write(Reply<String>(id: nil, error: .init(code: -32700, message: "not a JSON-RPC request: \(line)")))
            return
        }
        switch request.meaning {
        case .properties:
            write(Reply(id: request.id, result: sent.withLock { $0.properties } ?? SnapcastProperties(nil)))
        case .refused(let code, let message):
            write(Reply<String>(id: request.id, error: .init(code: code, message: message)))
        case .daemon(let control):
            do {
                let reply = try client.send(control)
                guard reply.ok == true else {
                    let message = reply.error ?? "the daemon refused \(control.command)"
                    write(Reply<String>(id: request.id, error: .init(code: -32000, message: message)))
                    return
                }
                write(Reply(id: request.id, result: "ok"))
                if let state = reply.state { publish(state) }
            } catch {
                let message = "no QueuePlayer daemon answers at \(client.path): start it with `queueplayerd`"
                write(Reply<String>(id: request.id, error: .init(code: -32000, message: message)))
            }
        }
    }

    /// Sends the properties of `state` (nil: no daemon) when they are news.
    private func publish(_ state: PlayerSnapshot?) {
        let properties = SnapcastProperties(state)
        let isNews = sent.withLock { sent in
            let now = ContinuousClock.now
            let elapsed = Double((now - sent.at) / .milliseconds(1)) / 1_000
            guard properties.isNews(after: sent.properties, elapsed: elapsed) else { return false }
            sent = (properties, now)
            return true
        }
        if isNews { write(Notification(method: "Plugin.Stream.Player.Properties", params: properties)) }
    }

    private func write(_ message: some Encodable) {
        guard let json = try? JSONEncoder().encode(message) else { return }
        let line = String(decoding: json, as: UTF8.self) + "\n"
        output.withLock { _ in StandardOutput.write(line) }
    }
}

/// A JSON-RPC 2.0 reply: `result` or `error`.
private struct Reply<Result: Encodable>: Encodable {
    /// `data` repeats `message`: snapserver 0.26 cannot parse an error without it, and then never answers its
    /// client.
    struct Failure: Encodable {
        var code: Int
        var message: String
        var data: String

        init(code: Int, message: String) {
            self.code = code
            self.message = message
            data = message
        }
    }

    var jsonrpc = "2.0"
    var id: RequestID?
    var result: Result?
    var error: Failure?
}

/// A JSON-RPC 2.0 notification.
private struct Notification<Parameters: Encodable>: Encodable {
    var jsonrpc = "2.0"
    var method: String
    var params: Parameters?
}

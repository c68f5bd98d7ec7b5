import AsyncHTTPClient
import Dispatch
import FoundationEssentials
import NIOCore
import Synchronization

/// A small document fetched whole over HTTP with the client remote items use: a playlist that a radio station
/// hands out, or a podcast's feed.
package enum RemoteDocument {
    /// A fetched document.
    package struct Fetched: Sendable, Equatable {
        /// The answer's `Content-Type`, lowercased, if it had one.
        package var contentType: String?
        /// The body.
        package var bytes: [UInt8]
    }

    /// The largest body taken: a playlist of 10,000 URLs is about 1 MiB; a podcast's feed of a thousand episodes,
    /// with their notes, several.
    package static let maximumBytes = 16 << 20
    /// How long the whole fetch may take, redirects included.
    package static let timeout = TimeAmount.seconds(10)

    /// How long a look at an answer's head may take.
    package static let headTimeout = TimeAmount.seconds(5)

    /// The `Content-Type` of `url`'s answer, lowercased, from its head alone: the body is not read, so a station's
    /// stream is closed at once. Nil when nothing answers within ``headTimeout``, the status is not 2xx, or the
    /// answer names no type: the caller goes on without knowing.
    ///
    /// Threading: blocks the calling thread until the head arrives; any thread but an event loop's (the request
    /// runs on the downloads' own loop).
    package static func contentType(of url: URL) -> String? {
        let found = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: DownloadExecutor.shared) {
            defer { done.signal() }
            var request = HTTPClientRequest(url: url.absoluteString)
            request.headers.add(name: "User-Agent", value: "QueuePlayer")
            request.tlsConfiguration = RemoteItemTrust.tlsConfiguration
            // Dropping the response unread cancels its request.
            guard let response = try? await HTTPDownload.client.execute(request, timeout: headTimeout),
                (200..<300).contains(response.status.code)
            else { return }
            found.withLock { $0 = response.headers.first(name: "Content-Type")?.lowercased() }
        }
        done.wait()
        return found.withLock { $0 }
    }

    /// Fetches `url` whole, following redirects as items do. Throws a ``DecoderError`` naming the URL when the host
    /// cannot be reached, the answer's status is not 2xx, the body exceeds ``maximumBytes``, or ``timeout`` passes.
    ///
    /// Threading: blocks the calling thread until the answer is whole; any thread but an event loop's (the fetch
    /// runs on the downloads' own loop).
    package static func fetch(_ url: URL) throws(DecoderError) -> Fetched {
        do {
            var request = try HTTPClient.Request(url: url.absoluteString)
            request.headers.add(name: "User-Agent", value: "QueuePlayer")
            request.tlsConfiguration = RemoteItemTrust.tlsConfiguration
            let accumulator = ResponseAccumulator(request: request, maxBodySize: maximumBytes)
            let response = try HTTPDownload.client.execute(
                request: request, delegate: accumulator, deadline: .now() + timeout
            ).futureResult.wait()
            guard (200..<300).contains(response.status.code) else {
                throw DecoderError(
                    .serverRefused, url: url,
                    reason: "the server answered \(response.status.code) \(response.status.reasonPhrase)",
                    suggestion: "Check the URL")
            }
            return Fetched(
                contentType: response.headers.first(name: "Content-Type")?.lowercased(),
                bytes: response.body.map { Array($0.readableBytesView) } ?? [])
        } catch let error as DecoderError {
            throw error
        } catch is ResponseAccumulator.ResponseTooBigError {
            throw DecoderError(
                .unreadable, url: url, reason: "its answer is larger than \(maximumBytes >> 20) MiB",
                suggestion: "Check the URL: it should lead to a playlist, not to the audio itself")
        } catch {
            throw NetworkFailure.unreachable(error, url: url)
        }
    }
}

import AsyncHTTPClient
import FoundationEssentials
import NIOCore

/// A small document fetched whole over HTTP with the client remote items use: a playlist that a radio station
/// hands out.
package enum RemoteDocument {
    /// A fetched document.
    package struct Fetched: Sendable, Equatable {
        /// The answer's `Content-Type`, lowercased, if it had one.
        package var contentType: String?
        /// The body.
        package var bytes: [UInt8]
    }

    /// The largest body taken: a playlist of 10,000 URLs is about 1 MiB.
    package static let maximumBytes = 4 << 20
    /// How long the whole fetch may take, redirects included.
    package static let timeout = TimeAmount.seconds(10)

    /// Fetches `url` whole, following redirects as items do. Throws a ``DecoderError`` naming the URL when the host
    /// cannot be reached, the answer's status is not 2xx, the body exceeds ``maximumBytes``, or ``timeout`` passes.
    ///
    /// Threading: blocks the calling thread until the answer is whole; any thread but an event loop's (the fetch
    /// runs on the downloads' own loop).
    package static func fetch(_ url: URL) throws(DecoderError) -> Fetched {
        do {
            var request = try HTTPClient.Request(url: url.absoluteString)
            request.headers.add(name: "User-Agent", value: "QueuePlayer")
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
            throw HTTPDownload.unreachable(error, url: url)
        }
    }
}

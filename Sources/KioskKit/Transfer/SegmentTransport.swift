import Crypto
import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one ranged GET and feeds its answer to a ``TransferHandler``:
/// ``TransferHandler/begin(first:last:continuation:)`` before the request, ``TransferHandler/receive(_:response:)`` for each piece of the body, in order and one at a
/// time (`false` cancels the request), then ``TransferHandler/complete(response:error:)`` once, whose continuation
/// gives the outcome. Cancelling the calling task cancels the request at once.
protocol SegmentTransport: Sendable {
    /// How the transport hands the body's pieces to the handlers it is given.
    var delivery: BodyDelivery { get }
    /// The idle timeout of a request, in seconds: connecting, and any wait for the next bytes.
    var timeout: TimeInterval { get }

    /// Sends `GET url` with `headers` through `handler`, for the bytes `first...last`.
    func get(
        _ url: URL, headers: [String: String], into handler: TransferHandler, first: Int64, last: Int64
    ) async throws -> SegmentOutcome

    /// Cancels the requests in flight and refuses new ones.
    func invalidate()
}

/// How a ``SegmentTransport`` hands over the pieces of a body, which decides how a ``TransferHandler`` takes them.
enum BodyDelivery: Sendable {
    /// On a queue that must not wait for the disk, with no back-pressure (URLSession's delegate queue): each piece
    /// is copied into a block, and full blocks are written and hashed on the transfer's I/O queue.
    case queued
    /// On threads of the transport's own, which read nothing more from the connection until the piece is taken
    /// (AsyncHTTPClient on the transport's own event loops): each piece is written and hashed where it arrives,
    /// with no copy and no hand-off to another thread.
    case inline
}

/// How one ranged request ended.
enum SegmentOutcome: Sendable {
    /// The range arrived whole (with the response's `ETag`).
    case received(entityTag: String?)
    /// The server sent the whole file (200) for a ranged request: the file changed since the validator.
    case fileChanged
}

import Crypto
import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Streams content files to disk through a ``SegmentTransport`` (URLSession's data delegate, or AsyncHTTPClient on
/// Linux): pieces of the body are hashed and written as they come (``BodyDelivery``), never buffered whole, never
/// crossing an actor per piece.
///
/// A file is fetched in consecutive ranged segments (`bytes=a-b`, 2 MiB): URLSession gives its delegate no
/// back-pressure (swift-corelibs-foundation queues every received chunk), so the segment size bounds the memory a
/// fast network can fill while hashing catches up. The first request of a resumed file carries `If-Range`.
final class FileFetcher: Sendable {
    /// The size of one ranged request.
    static let segmentSize: Int64 = 2 << 20

    /// How each ranged request goes out: URLSession, or on Linux without an app session configuration,
    /// AsyncHTTPClient (``NIOSegmentTransport``).
    let transport: any SegmentTransport
    let writerFactory: FileWriterFactory

    /// A fetcher that opens at most `maximumConnections` connections to a host (the client's ``ConnectionBudget``
    /// limit, so that every request holding a permit has a connection of its own), made from the app's
    /// `sessionConfiguration` when given (see ``URLSessionConfiguration/kiosk(base:timeout:)``). Without one, on
    /// Linux, content goes through AsyncHTTPClient: swift-corelibs-foundation's URLSession hands over at most 16 KiB
    /// per callback, each through an `OperationQueue`, and spent more time on that than on hashing.
    ///
    /// A proxy set in the environment (`http_proxy`, `https_proxy`, `all_proxy`, in either case) keeps URLSession,
    /// whose libcurl honours them (and `no_proxy`) as it always did; AsyncHTTPClient does not read them.
    convenience init(
        timeout: TimeInterval, maximumConnections: Int, writerFactory: FileWriterFactory,
        sessionConfiguration: URLSessionConfiguration? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        let transport: any SegmentTransport
        #if canImport(AsyncHTTPClient) && os(Linux)
            if sessionConfiguration == nil, !Self.namesAProxy(environment) {
                transport = NIOSegmentTransport(timeout: timeout, maximumConnections: maximumConnections)
            } else {
                transport = URLSessionSegmentTransport(
                    timeout: timeout, maximumConnections: maximumConnections,
                    sessionConfiguration: sessionConfiguration)
            }
        #else
            transport = URLSessionSegmentTransport(
                timeout: timeout, maximumConnections: maximumConnections, sessionConfiguration: sessionConfiguration)
        #endif
        self.init(transport: transport, writerFactory: writerFactory)
    }

    /// A fetcher that sends its requests through `transport`.
    init(transport: any SegmentTransport, writerFactory: FileWriterFactory) {
        self.transport = transport
        self.writerFactory = writerFactory
    }

    /// Whether `environment` sets a proxy for libcurl.
    static func namesAProxy(_ environment: [String: String]) -> Bool {
        ["http_proxy", "https_proxy", "all_proxy"].contains { name in
            [name, name.uppercased()].contains { !(environment[$0] ?? "").isEmpty }
        }
    }

    /// How long an error answer may take, from its status line to its last byte: the transport's idle timeout, at
    /// most ``TransferHandler/maximumErrorAnswerDeadline``. An error answer is a short JSON envelope; one that drips
    /// would otherwise hold the download for as long as the server likes, each byte inside the idle timeout.
    var errorAnswerDeadline: TimeInterval { min(transport.timeout, TransferHandler.maximumErrorAnswerDeadline) }

    /// Ends the transport (outstanding transfers are cancelled).
    func invalidate() { transport.invalidate() }

    /// Fetches `request.url` from `request.offset` into the part file, continuing `hasher` (which must already
    /// hold the first `offset` bytes of the part file).
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled (the bytes received so far are kept),
    ///   ``KioskError/server(status:code:message:retryAfter:)`` for an error answer (its body is never written),
    ///   ``KioskError/invalidResponse(_:)`` when the answer does not match the request, ``KioskError/network``,
    ///   ``KioskError/insufficientStorage(needed:available:)``.
    ///
    /// `entityTagSeen` is called (once) when the first response brings a validator the request did not have, so
    /// that the journal can keep it for the `If-Range` of a later resume.
    func fetch(
        _ request: FetchRequest, hasher: SHA256,
        entityTagSeen: @Sendable (String) async -> Void = { _ in },
        progress: @escaping @Sendable (Int64) -> Void
    ) async throws -> FetchOutcome {
        let handler = try TransferHandler(
            request: request, hasher: hasher, writerFactory: writerFactory, delivery: transport.delivery,
            errorAnswerDeadline: errorAnswerDeadline, progress: progress)
        var entityTag = request.entityTag
        do {
            while handler.received < request.expectedLength {
                let first = handler.received
                let last = min(first + Self.segmentSize, request.expectedLength) - 1
                switch try await segment(handler, first: first, last: last, entityTag: first > 0 ? entityTag : nil) {
                case .received(let tag):
                    // A store's validator is not Kiosk's: a presigned source keeps none (``ContentSource``).
                    if let tag, tag != entityTag, request.token != nil {
                        entityTag = tag
                        await entityTagSeen(tag)
                    }
                case .fileChanged:
                    // 200 where 206 was asked with If-Range: the file changed. Start it over from byte 0.
                    try handler.restart()
                    entityTag = nil
                }
            }
            let (_, digest, kept) = try handler.finish(keepingOpen: true)
            guard let writer = kept, let digest else {
                throw KioskError.fileSystem(
                    path: request.partURL.lastPathComponent, underlying: "the part file was closed")
            }
            return FetchOutcome(sha256: digest, entityTag: entityTag, unsynced: UnsyncedFile(writer))
        } catch {
            _ = try? handler.finish(keepingOpen: false)  // keep every valid byte received so far
            throw error
        }
    }

    /// Fetches the range `request.offset ..< request.rangeEnd` into `file` at the same offsets (in requests of at
    /// most `segmentSize`, so that memory stays bounded), through `blocks` when the transport's pieces are queued
    /// (not used by another transfer meanwhile; blocks of its own when `nil`). Nothing is hashed here: `file`
    /// verifies what it receives (``SegmentSplitter`` hashes each chunk or file of the range on its own). A request
    /// whose connection breaks after bringing some bytes goes on from the next byte; one that brought none throws.
    ///
    /// - Throws: as ``fetch(_:hasher:entityTagSeen:progress:)``; ``KioskError/invalidResponse(_:)`` when the
    ///   server answers a range with the whole file.
    func fetchRange(
        _ request: FetchRequest, into file: any PositionalPartFileWriter, blocks: TransferBlocks?,
        segmentSize: Int64 = FileFetcher.segmentSize
    ) async throws {
        let handler = TransferHandler(
            request: request, hasher: nil, writer: OffsetWriter(file, at: request.offset),
            writerFactory: writerFactory, delivery: transport.delivery, blocks: blocks,
            errorAnswerDeadline: errorAnswerDeadline, progress: { _ in })
        do {
            for range in Self.segments(from: request.offset, to: request.rangeEnd, size: segmentSize) {
                var first = range.lowerBound
                while true {
                    do {
                        let outcome = try await segment(
                            handler, first: first, last: range.upperBound, entityTag: request.entityTag)
                        guard case .received = outcome else {
                            throw KioskError.invalidResponse("the server sent the whole file for a range of it")
                        }
                        break
                    } catch KioskError.network(let code, let underlying) {
                        guard RetryPolicy.continuesAtOnce(brokenRequestFrom: first, receivedUpTo: handler.received)
                        else { throw KioskError.network(code: code, underlying: underlying) }
                        first = handler.received
                    }
                }
            }
            _ = try handler.finish(keepingOpen: false)
        } catch {
            _ = try? handler.finish(keepingOpen: false)
            throw error
        }
    }

    /// The ranged requests that fetch `start ..< end`: consecutive, each at most ``segmentSize`` bytes.
    static func segments(from start: Int64, to end: Int64, size: Int64 = segmentSize) -> [ClosedRange<Int64>] {
        stride(from: start, to: end, by: Int(size)).map { first in first...(min(first + size, end) - 1) }
    }

    /// One ranged GET of `first...last` through `handler`, cancelled with the calling task.
    private func segment(
        _ handler: TransferHandler, first: Int64, last: Int64, entityTag: String?
    ) async throws -> SegmentOutcome {
        let request = handler.request
        var headers = ["Accept-Encoding": "identity", "Range": "bytes=\(first)-\(last)"]
        // A presigned URL carries its own proof, and no validator of Kiosk's: its request has none (``ContentSource``).
        if let token = request.token { headers[BearerAuthorization.name] = BearerAuthorization.value(token) }
        if let entityTag { headers["If-Range"] = entityTag }
        return try await transport.get(request.url, headers: headers, into: handler, first: first, last: last)
    }
}

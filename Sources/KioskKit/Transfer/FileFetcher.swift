import Crypto
import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One ranged GET of one content file into its `.part` file.
struct FetchRequest: Sendable {
    /// The absolute content URL.
    var url: URL
    /// The grant token (sent as `Authorization: Bearer`; never logged).
    var token: String
    /// Bytes already in the part file: the request asks for `bytes=<offset>-`.
    var offset: Int64
    /// The file's length according to the grant.
    var expectedLength: Int64
    /// The validator for `If-Range`, if one was seen.
    var entityTag: String?
    /// The `.part` file.
    var partURL: URL
    /// Where the range to fetch ends (exclusive) for one chunk of a file fetched by chunks; `nil` for the rest of
    /// the file.
    var end: Int64? = nil

    /// The end of the range to fetch (exclusive).
    var rangeEnd: Int64 { end ?? expectedLength }
}

/// Writes what a transfer receives into a shared file at consecutive offsets from `offset`: one chunk of a file
/// fetched by chunks, while other chunks of it are written by other transfers. Closing it leaves the file open.
final class OffsetWriter: PartFileWriter {
    let file: any PositionalPartFileWriter
    private(set) var offset: Int64

    init(_ file: any PositionalPartFileWriter, at offset: Int64) {
        self.file = file
        self.offset = offset
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(KioskError) {
        try file.write(bytes, at: offset)
        offset += Int64(bytes.count)
    }

    func close() {}
}

/// What a completed fetch left on disk.
struct FetchOutcome: Sendable {
    /// The part file's size after the transfer (equals the expected length).
    var bytesOnDisk: Int64
    /// The lowercase hex SHA-256 of the whole part file.
    var sha256: String
    /// The response's `ETag`.
    var entityTag: String?
    /// Whether the server sent the whole file (200) although a range was asked: the file was started over.
    var restartedFromZero: Bool
    /// The part file, still open and not yet fsynced: the journal's group commit makes it durable (and closes it)
    /// before it records the file as verified.
    var unsynced: UnsyncedFile
}

/// A complete file whose bytes may not be durable yet. The journal's writer fsyncs it in the group commit that
/// records it as verified, so that the download goes on meanwhile and files verified close together share the
/// journal's fsync.
///
/// `@unchecked Sendable`: its writer has one owner at a time (the transfer, then the journal's writer queue).
final class UnsyncedFile: @unchecked Sendable {
    private enum Source {
        case open(any PartFileWriter)
        case shared(any PositionalPartFileWriter)
        case path(URL, any KioskFileSystem)
    }

    private let source: Source

    /// A file still open for writing.
    init(_ writer: any PartFileWriter) { source = .open(writer) }

    /// A file that several ranges are still being written to (a file fetched by chunks): each synchronization
    /// fsyncs it and leaves it open; it is closed when this value goes away, that is once the transfer and every
    /// journal append naming it are done with it. One such value is shared by every checkpoint of the file, so
    /// that a group commit fsyncs it once.
    init(shared writer: any PositionalPartFileWriter) { source = .shared(writer) }

    deinit {
        if case .shared(let writer) = source { writer.close() }
    }

    /// A file found complete on disk (written by an earlier session, perhaps never fsynced).
    init(_ url: URL, fileSystem: any KioskFileSystem) { source = .path(url, fileSystem) }

    /// fsyncs the file and closes it (a shared file stays open).
    func synchronize() throws(KioskError) {
        switch source {
        case .open(let writer):
            defer { writer.close() }
            try writer.synchronize()
        case .shared(let writer):
            try writer.synchronize()
        case .path(let url, let fileSystem):
            do throws(SystemCallError) {
                let file = try fileSystem.open(url, mode: .read)
                defer { file.close() }
                try file.synchronize()
            } catch {
                throw .fileSystem(path: url.lastPathComponent, underlying: error.message)
            }
        }
    }
}

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
        var restarted = false
        do {
            while handler.received < request.expectedLength {
                let first = handler.received
                let last = min(first + Self.segmentSize, request.expectedLength) - 1
                switch try await segment(handler, first: first, last: last, entityTag: first > 0 ? entityTag : nil) {
                case .received(let tag):
                    if let tag, tag != entityTag {
                        entityTag = tag
                        await entityTagSeen(tag)
                    }
                case .fileChanged:
                    // 200 where 206 was asked with If-Range: the file changed. Start it over from byte 0.
                    try handler.restart()
                    entityTag = nil
                    restarted = true
                }
            }
            let (bytesOnDisk, digest, kept) = try handler.finish(keepingOpen: true)
            guard let writer = kept, let digest else {
                throw KioskError.fileSystem(
                    path: request.partURL.lastPathComponent, underlying: "the part file was closed")
            }
            return FetchOutcome(
                bytesOnDisk: bytesOnDisk, sha256: digest, entityTag: entityTag,
                restartedFromZero: restarted, unsynced: UnsyncedFile(writer))
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
                        let outcome = try await segment(handler, first: first, last: range.upperBound, entityTag: nil)
                        guard case .received = outcome else {
                            throw KioskError.invalidResponse("the server sent the whole file for a range of it")
                        }
                        break
                    } catch KioskError.network(let code, let underlying) {
                        // A connection that broke after bringing bytes: go on from there, so that a network cutting
                        // every connection after a few hundred KiB still gets each chunk.
                        guard handler.received > first else {
                            throw KioskError.network(code: code, underlying: underlying)
                        }
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
        var headers = [
            "Authorization": "Bearer \(request.token)", "Accept-Encoding": "identity",
            "Range": "bytes=\(first)-\(last)",
        ]
        if let entityTag { headers["If-Range"] = entityTag }
        return try await transport.get(request.url, headers: headers, into: handler, first: first, last: last)
    }
}

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

/// Content through a URLSession whose serial delegate queue calls the handlers.
final class URLSessionSegmentTransport: SegmentTransport {
    let session: URLSession
    let delivery = BodyDelivery.queued
    let timeout: TimeInterval
    private let router: TransferRouter

    /// A session that opens at most `maximumConnections` connections to a host, made from `sessionConfiguration`
    /// when given.
    init(timeout: TimeInterval, maximumConnections: Int, sessionConfiguration: URLSessionConfiguration?) {
        let configuration = URLSessionConfiguration.kiosk(
            base: sessionConfiguration, timeout: timeout, cookies: false)
        configuration.httpMaximumConnectionsPerHost = maximumConnections
        let router = TransferRouter()
        // Bounded: swift-corelibs-foundation hands each received piece to the delegate queue without waiting, so a
        // body that does not end (an error answer) would pile up there faster than it is read, and be read on long
        // after the handler asked to cancel.
        let queue = BoundedOperationQueue(limit: 16)
        queue.name = "KioskKit.FileFetcher"
        self.timeout = timeout
        self.router = router
        self.session = URLSession(configuration: configuration, delegate: router, delegateQueue: queue)
    }

    func invalidate() { session.invalidateAndCancel() }

    func get(
        _ url: URL, headers: [String: String], into handler: TransferHandler, first: Int64, last: Int64
    ) async throws -> SegmentOutcome {
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = "GET"
        for (name, value) in headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        let task = session.dataTask(with: urlRequest)
        let router = self.router
        let start = SegmentStart(task)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<SegmentOutcome, any Error>) in
                handler.begin(first: first, last: last, continuation: continuation) { start.cancel() }
                let started = start.start { router.register(handler, for: task.taskIdentifier) }
                if !started { handler.abandon(throwing: CancellationError()) }
            }
        } onCancel: {
            start.cancel()
        }
    }
}

/// Starts a segment's URLSession task so that a cancellation cannot fall between the start and the wait: one that
/// comes first means the task never starts (the wait ends at once), one that comes later cancels the running task,
/// whose completion then ends the wait. Without this, a task cancelled before `resume()` never completes.
final class SegmentStart: Sendable {
    private enum State {
        case pending
        case started
        case cancelled
    }

    private let task: URLSessionDataTask
    private let state = Locked(State.pending)

    init(_ task: URLSessionDataTask) { self.task = task }

    /// Registers the task (`register`) and resumes it, unless the fetch was cancelled first. Returns whether the
    /// task started.
    func start(register: () -> Void) -> Bool {
        state.withLock { state in
            guard case .pending = state else { return false }
            register()
            task.resume()
            state = .started
            return true
        }
    }

    /// Cancels the task if it started; otherwise makes sure it never does.
    func cancel() {
        state.withLock { state in
            if case .started = state { task.cancel() }
            state = .cancelled
        }
    }
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

/// The session delegate: routes each task's callbacks to its ``TransferHandler``, and cancels a task once its
/// handler wants no more of it.
///
/// `@unchecked Sendable`: its only state is the `Locked` table; URLSession calls it on the serial delegate queue.
final class TransferRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct Routes {
        var handlers: [Int: TransferHandler] = [:]
        /// Tasks whose cancellation was asked for (once each).
        var stopping: Set<Int> = []
    }

    private let routes = Locked(Routes())

    func register(_ handler: TransferHandler, for identifier: Int) {
        routes.withLock { $0.handlers[identifier] = handler }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let identifier = dataTask.taskIdentifier
        guard let handler = routes.withLock({ $0.handlers[identifier] }),
            !handler.receive(data, response: dataTask.response),
            routes.withLock({ $0.stopping.insert(identifier).inserted })
        else { return }
        // Once, and off the delegate queue: swift-corelibs-foundation cancels synchronously on the session's queue,
        // which may be waiting for this one (BoundedOperationQueue).
        TransferHandler.stops.async { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let identifier = task.taskIdentifier
        guard
            let handler = routes.withLock({ routes in
                routes.stopping.remove(identifier)
                return routes.handlers.removeValue(forKey: identifier)
            })
        else { return }
        handler.complete(response: task.response, error: error)
    }

    /// Redirects are not followed: a grant's URLs are checked to be on the server's own origin, and a redirect would
    /// take the bearer token elsewhere. The 3xx is the answer, and fails as its status.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

/// The state of one file's transfer, across its ranged requests.
///
/// Pieces of the body arrive one at a time, as the transport delivers them (``BodyDelivery``). Queued (URLSession's
/// serial delegate queue), each is copied into one of a few fixed blocks; a full block goes to the transfer's I/O
/// queue, which writes it and hashes it at the same time (two threads), then hands the block back. Memory stays
/// bounded (`blockCount × blockSize`) and hashing overlaps the network. A small file gets blocks of its own size
/// (at least a page), so that the files in flight cost no more than their bytes. Inline (the AsyncHTTPClient
/// transport's own event loops, which read no more of that connection meanwhile), each piece is written and hashed
/// at once on the thread that brought it: no block, no copy, no hand-off.
///
/// `@unchecked Sendable`: the receiving state is touched only by the thread delivering the request's pieces, one at
/// a time (or by `fetch` between two requests, when no callback can run), the hashing and writing state only by
/// ``take(_:)`` (on `ioQueue`, or inline on the delivering thread, which `finish` follows), and what both read goes
/// through `Locked`.
final class TransferHandler: @unchecked Sendable {
    private enum Mode {
        case undecided
        case content
        case errorBody(status: Int)
        case fileChanged
        case failed
    }

    /// How much of an error answer's body is kept (for its envelope): once it arrived, the request ends.
    static let errorBodyLimit = 64 << 10
    /// The longest an error answer may take, from its status line to its last byte: ``errorAnswerDeadline``, at
    /// most this (a body that drips a byte now and then never reaches ``errorBodyLimit`` and never idles out).
    static let maximumErrorAnswerDeadline: TimeInterval = 10
    /// Where requests are stopped (a cancel may wait for the transport's own queue). A serial queue of its own gets
    /// a thread even when the global queue's few threads (one per CPU) are all busy, so a stop never waits for them.
    static let stops = DispatchQueue(label: "KioskKit.TransferHandler.stops")

    static let blockSize = 1 << 20
    /// The block size of a chunk's transfer: several chunks of one file are in flight at once, each with blocks of
    /// its own (``TransferBlocks``, reused from chunk to chunk), so that memory stays about what one whole-file
    /// transfer takes.
    static let rangeBlockSize = 256 << 10
    /// The smallest block written and hashed on two threads at once.
    static let parallelBlockMinimum = 64 << 10
    static let blockCount = 4

    let request: FetchRequest
    let writerFactory: FileWriterFactory
    let delivery: BodyDelivery
    let progress: @Sendable (Int64) -> Void
    /// How long an error answer may take, from its status line to its last byte.
    let errorAnswerDeadline: TimeInterval

    // Delegate queue state (one request at a time).
    private var continuation: CheckedContinuation<SegmentOutcome, any Error>?
    private var segmentFirst: Int64 = 0
    private var segmentLast: Int64 = 0
    private var mode = Mode.undecided
    private var current: UnsafeMutableRawBufferPointer?
    private var filled = 0
    /// Bytes of the file received so far (written, in flight to the I/O queue, or in the current block).
    private(set) var received: Int64
    private var errorBody = Data()
    /// Whether the current request's error answer was cut at its limit and answered before its task ended.
    private var answeredEarly = false
    private var failure: KioskError?
    private var entityTag: String?
    private var lastProgress: UInt64 = 0

    // I/O queue state.
    private let ioQueue = DispatchQueue(label: "KioskKit.TransferHandler.io")
    /// `nil` when the writer verifies what it receives itself (a range split by ``SegmentSplitter``).
    private var hasher: SHA256?
    private var writer: (any PartFileWriter)?
    private var written: Int64

    // Shared.
    /// `nil` for inline delivery.
    private let blocks: TransferBlocks?
    private let freeBlocks: Locked<[UnsafeMutableRawBufferPointer]>
    private let available = DispatchSemaphore(value: TransferHandler.blockCount)
    private let ioFailure = Locked<KioskError?>(nil)
    /// The error answer of the current request, which its deadline's timer and the delivering thread share.
    private let errorAnswer = Locked(ErrorAnswer())

    convenience init(
        request: FetchRequest, hasher: SHA256, writerFactory: FileWriterFactory, delivery: BodyDelivery,
        errorAnswerDeadline: TimeInterval, progress: @escaping @Sendable (Int64) -> Void
    ) throws(KioskError) {
        self.init(
            request: request, hasher: hasher, writer: try writerFactory.open(request.partURL, request.offset),
            writerFactory: writerFactory, delivery: delivery, errorAnswerDeadline: errorAnswerDeadline,
            progress: progress)
    }

    /// A transfer into `writer`, which is at `request.offset` already, with pieces delivered as `delivery` says:
    /// queued, through `blocks` (reused from an earlier transfer that is over) or blocks of its own. Hashed with
    /// `hasher` (none when `nil`). An error answer ends after its first ``errorBodyLimit`` bytes or
    /// `errorAnswerDeadline` seconds, whichever comes first.
    init(
        request: FetchRequest, hasher: SHA256?, writer: any PartFileWriter, writerFactory: FileWriterFactory,
        delivery: BodyDelivery, blocks: TransferBlocks? = nil, errorAnswerDeadline: TimeInterval,
        progress: @escaping @Sendable (Int64) -> Void
    ) {
        self.request = request
        self.hasher = hasher
        self.writerFactory = writerFactory
        self.delivery = delivery
        self.errorAnswerDeadline = errorAnswerDeadline
        self.progress = progress
        self.received = request.offset
        self.written = request.offset
        self.writer = writer
        switch delivery {
        case .queued:
            let blocks =
                blocks
                ?? TransferBlocks(size: Int(min(Int64(Self.blockSize), max(4096, request.rangeEnd - request.offset))))
            self.blocks = blocks
            self.freeBlocks = Locked(blocks.buffers)
        case .inline:
            self.blocks = nil
            self.freeBlocks = Locked([])
        }
    }

    deinit { writer?.close() }

    /// Prepares for the request of `first...last` (called before the task starts); `stop` cancels that request
    /// (when its error answer passes its deadline).
    func begin(
        first: Int64, last: Int64, continuation: CheckedContinuation<SegmentOutcome, any Error>,
        stop: @escaping @Sendable () -> Void
    ) {
        self.continuation = continuation
        segmentFirst = first
        segmentLast = last
        mode = .undecided
        errorBody = Data()
        failure = nil
        entityTag = nil
        errorAnswer.withLock { $0.begin(stop: stop) }
    }

    /// Ends the wait for a request that never started (its fetch was cancelled first).
    func abandon(throwing error: any Error) {
        let continuation = self.continuation
        self.continuation = nil
        continuation?.resume(throwing: error)
    }

    /// Starts the file over from byte 0 (after a 200 answered a ranged request). Called between two requests.
    func restart() throws(KioskError) {
        let fresh = try writerFactory.open(request.partURL, 0)
        ioQueue.sync {
            writer?.close()
            writer = fresh
            written = 0
            if hasher != nil { hasher = SHA256() }
        }
        received = 0
    }

    /// Writes what is left and waits for the I/O queue. Returns the bytes on disk, the hex SHA-256 of the whole part
    /// file (`nil` without a hasher), and its writer when `keepingOpen` is set (the file is complete: the journal
    /// fsyncs and closes it); otherwise the file is closed.
    func finish(keepingOpen: Bool) throws(KioskError) -> (Int64, String?, (any PartFileWriter)?) {
        submit()  // every taken block goes back (DispatchSemaphore must end at its initial value)
        let (bytes, digest, kept, error): (Int64, String?, (any PartFileWriter)?, KioskError?) = ioQueue.sync {
            let error = ioFailure.withLock { $0 }
            let kept = keepingOpen && error == nil ? writer : nil
            if kept == nil { writer?.close() }
            writer = nil
            return (written, hasher?.finalize().hexString, kept, error)
        }
        if let error { throw error }
        return (bytes, digest, kept)
    }

    /// Decides what the response is on its first bytes (or at completion for an empty body).
    private func decide(_ response: URLResponse?) {
        guard case .undecided = mode else { return }
        guard let http = response as? HTTPURLResponse else {
            fail(.invalidResponse("not an HTTP response"))
            return
        }
        entityTag = http.value(forHTTPHeaderField: "ETag")
        let status = http.statusCode
        guard status == 200 || status == 206 else {
            mode = .errorBody(status: status)
            startErrorAnswerDeadline()
            return
        }
        // An error body must never become content: a JSON answer for a file that is not JSON is refused here;
        // Content-Length, Content-Range and the SHA-256 check catch the rest.
        let type = (http.value(forHTTPHeaderField: "Content-Type") ?? "").lowercased()
        if type.contains("json"), !request.partURL.deletingPathExtension().pathExtension.lowercased().contains("json") {
            fail(.invalidResponse("a content request was answered with \(type) and status \(status)"))
            return
        }
        if status == 200 {
            guard segmentFirst == 0, request.rangeEnd == request.expectedLength else {
                mode = .fileChanged
                return
            }
            // The whole file instead of the first segment (ranges ignored): take it.
            segmentLast = request.expectedLength - 1
        } else {
            let field = http.value(forHTTPHeaderField: "Content-Range") ?? ""
            guard case .satisfied(let range, let complete)? = ContentRange(parsing: field),
                range.first == segmentFirst, range.last == segmentLast, complete == request.expectedLength
            else {
                fail(
                    .invalidResponse(
                        "Content-Range '\(field)' does not match bytes=\(segmentFirst)-\(segmentLast) of \(request.expectedLength)"
                    ))
                return
            }
        }
        if let length = http.value(forHTTPHeaderField: "Content-Length").flatMap(Int64.init),
            length != segmentLast - segmentFirst + 1
        {
            fail(.invalidResponse("Content-Length \(length) does not match the requested range"))
            return
        }
        mode = .content
    }

    /// Ends the current request once its error answer has taken ``errorAnswerDeadline``, unless it ended first.
    private func startErrorAnswerDeadline() {
        let request = errorAnswer.withLock { $0.request }
        let deadline = DispatchTime.now() + errorAnswerDeadline
        Self.stops.asyncAfter(deadline: deadline) { [weak self] in
            guard let stop = self?.errorAnswer.withLock({ $0.cut(request: request) }) else { return }
            stop()
        }
    }

    private func fail(_ error: KioskError) {
        if failure == nil { failure = error }
        mode = .failed
    }

    /// Takes one chunk. Returns `false` to cancel the task.
    func receive(_ data: Data, response: URLResponse?) -> Bool {
        data.withUnsafeBytes { receive($0, response: response) }
    }

    /// Takes one chunk. Returns `false` to cancel the task.
    func receive(_ chunk: UnsafeRawBufferPointer, response: URLResponse?) -> Bool {
        if case .undecided = mode { decide(response) }
        switch mode {
        case .undecided, .failed, .fileChanged:
            return false
        case .errorBody(let status):
            errorBody.append(contentsOf: chunk.prefix(Self.errorBodyLimit - errorBody.count))
            guard errorBody.count >= Self.errorBodyLimit else { return true }
            // Enough to read the envelope: the rest is not read. The request is cancelled and ends here, as its
            // status: swift-corelibs-foundation's URLSession acts on a cancel only once the socket has nothing more
            // to read, seconds later on a fast body, so the answer does not wait for the task's end.
            if errorAnswer.withLock({ $0.cut(request: $0.request) }) != nil, let continuation {
                self.continuation = nil
                answeredEarly = true
                continuation.resume(throwing: errorAnswerFailure(status: status, response: response))
            }
            return false
        case .content:
            break
        }
        if let error = ioFailure.withLock({ $0 }) {
            fail(error)
            return false
        }
        guard received + Int64(chunk.count) <= segmentLast + 1 else {
            fail(.invalidResponse("the server sent more bytes than were asked for"))
            return false
        }
        switch delivery {
        case .inline:
            take(chunk)
            if let error = ioFailure.withLock({ $0 }) {
                fail(error)
                return false
            }
        case .queued:
            enqueue(chunk)
        }
        received += Int64(chunk.count)
        let now = DispatchTime.now().uptimeNanoseconds
        if now &- lastProgress >= 50_000_000 {
            lastProgress = now
            progress(received)
        }
        return true
    }

    /// Copies `chunk` into blocks, handing each full one to the I/O queue.
    private func enqueue(_ chunk: UnsafeRawBufferPointer) {
        var rest = chunk
        while !rest.isEmpty {
            if current == nil {
                available.wait()
                current = freeBlocks.withLock { $0.removeLast() }
                filled = 0
            }
            let block = current!
            let take = min(rest.count, block.count - filled)
            (block.baseAddress! + filled).copyMemory(from: rest.baseAddress!, byteCount: take)
            filled += take
            rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            if filled == block.count { submit() }
        }
    }

    /// Hands the current block to the I/O queue: write and hash it concurrently, then free it.
    private func submit() {
        guard let current else { return }
        let block = Block(buffer: current)
        let count = filled
        self.current = nil
        filled = 0
        ioQueue.async { [self] in
            defer {
                freeBlocks.withLock { $0.append(block.buffer) }
                available.signal()
            }
            take(UnsafeRawBufferPointer(rebasing: block.buffer[0..<count]))
        }
    }

    /// Writes `bytes` and hashes them, unless an earlier piece failed; a failure is kept in `ioFailure`. Queued
    /// blocks of 64 KiB and more are written and hashed at the same time, on two threads; inline pieces one after
    /// the other, on the delivering thread (each connection has its own, so nothing is handed off).
    private func take(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, ioFailure.withLock({ $0 }) == nil, let writer else { return }
        guard let runningHash = hasher else {
            // The writer verifies the bytes itself: write only.
            do throws(KioskError) {
                try writer.write(bytes)
                written += Int64(bytes.count)
            } catch {
                ioFailure.withLock { $0 = error }
            }
            return
        }
        let step = BlockStep(hasher: runningHash)
        let piece = Piece(bytes: bytes)
        let work: @Sendable (Int) -> Void = { index in
            if index == 0, let writer = self.writer {
                do { try writer.write(piece.bytes) } catch {
                    step.writeError = (error as? KioskError) ?? .fileSystem(path: "part", underlying: "\(error)")
                }
            } else {
                step.hasher.update(bufferPointer: piece.bytes)
            }
        }
        // Below 64 KiB, handing half the work to another thread costs more than it saves (small files).
        if delivery == .inline || bytes.count < Self.parallelBlockMinimum {
            work(0)
            work(1)
        } else {
            DispatchQueue.concurrentPerform(iterations: 2, execute: work)
        }
        if let writeError = step.writeError {
            ioFailure.withLock { $0 = writeError }
            return
        }
        hasher = step.hasher
        written += Int64(bytes.count)
    }

    /// The error an error answer of `status` stands for, from the body kept and the response's `Retry-After`.
    private func errorAnswerFailure(status: Int, response: URLResponse?) -> KioskError {
        let retryAfter = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After")
        return KioskError.fromResponse(
            status: status, body: errorBody, retryAfter: RetryAfter.seconds(from: retryAfter))
    }

    /// The request ended.
    func complete(response: URLResponse?, error: (any Error)?) {
        // An error answer cut at its limit or deadline ended as its status, not as the cancellation that cut it.
        let error = errorAnswer.withLock { $0.end() } ? nil : error
        guard !answeredEarly else {
            // Cut at its limit: answered already.
            answeredEarly = false
            return
        }
        if error == nil { decide(response) }
        let continuation = self.continuation
        self.continuation = nil
        progress(received)
        guard let continuation else { return }
        if case .fileChanged = mode {
            continuation.resume(returning: .fileChanged)
            return
        }
        if failure == nil, let ioError = ioFailure.withLock({ $0 }) { failure = ioError }
        if let failure {
            continuation.resume(throwing: failure)
            return
        }
        if let error {
            if let urlError = error as? URLError, urlError.code == .cancelled {
                continuation.resume(throwing: CancellationError())
            } else {
                continuation.resume(throwing: APIClient.networkError(error))
            }
            return
        }
        switch mode {
        case .errorBody(let status):
            continuation.resume(throwing: errorAnswerFailure(status: status, response: response))
        case .content:
            guard received == segmentLast + 1 else {
                continuation.resume(
                    throwing: KioskError.network(
                        code: URLError.networkConnectionLost.rawValue,
                        underlying: "the connection ended after \(received) of \(request.expectedLength) bytes"))
                return
            }
            continuation.resume(returning: .received(entityTag: entityTag))
        case .undecided, .failed, .fileChanged:
            continuation.resume(throwing: KioskError.invalidResponse("no usable answer"))
        }
    }
}

/// The error answer of a ``TransferHandler``'s current request: whether it was cut (its body read as far as it is
/// kept, or its deadline passed), and how to stop the request. The delivering thread and the deadline's timer share
/// it; requests are numbered so that a late timer cannot cut the next one.
struct ErrorAnswer {
    /// The number of the current request.
    private(set) var request = 0
    private var stop: (@Sendable () -> Void)?
    private var isCut = false

    /// A new request, stopped by `stop`.
    mutating func begin(stop: @escaping @Sendable () -> Void) {
        request += 1
        self.stop = stop
        isCut = false
    }

    /// Cuts the answer of request `number` if it is the current one and still going: returns how to stop it (once).
    mutating func cut(request number: Int) -> (@Sendable () -> Void)? {
        guard number == request, let stop, !isCut else { return nil }
        isCut = true
        return stop
    }

    /// The request ended: whether its answer was cut.
    mutating func end() -> Bool {
        defer {
            stop = nil
            isCut = false
        }
        return isCut
    }
}

/// The ``TransferHandler/blockCount`` buffers of a transfer. A transfer that is over (its fetch returned or threw)
/// has given every block back, so the next transfer of the same lane may take them: the chunks of a file reuse their
/// lane's blocks instead of allocating (and giving back to malloc's per-thread arenas) a megabyte per chunk.
///
/// `@unchecked Sendable`: the buffers are used by one transfer at a time (see ``TransferHandler``).
final class TransferBlocks: @unchecked Sendable {
    let buffers: [UnsafeMutableRawBufferPointer]

    init(size: Int) {
        buffers = (0..<TransferHandler.blockCount).map { _ in
            UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 64)
        }
    }

    deinit { for buffer in buffers { buffer.deallocate() } }
}

/// The two results of processing one block in parallel. `@unchecked Sendable`: each field is written by exactly
/// one of the two `concurrentPerform` iterations and read after both have finished.
private final class BlockStep: @unchecked Sendable {
    var hasher: SHA256
    var writeError: KioskError?

    init(hasher: SHA256) { self.hasher = hasher }
}

/// A block handed from the delegate queue to the I/O queue. `@unchecked Sendable`: exactly one queue owns a
/// block at a time; ownership passes through the free list and its semaphore.
private struct Block: @unchecked Sendable {
    let buffer: UnsafeMutableRawBufferPointer
}

/// Bytes written and hashed on two threads at once. `@unchecked Sendable`: both only read them, and their owner
/// waits for both before the memory is reused.
private struct Piece: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer
}

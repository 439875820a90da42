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
}

/// Streams content files to disk with URLSession's data delegate: chunks are hashed and written in large blocks
/// on the session's serial delegate queue, never buffered whole, never crossing an actor per chunk.
final class FileFetcher: Sendable {
    let session: URLSession
    private let router: TransferRouter
    let writerFactory: FileWriterFactory

    init(timeout: TimeInterval, writerFactory: FileWriterFactory) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpCookieStorage = nil
        configuration.httpMaximumConnectionsPerHost = 8
        let router = TransferRouter()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "KioskKit.FileFetcher"
        self.router = router
        self.session = URLSession(configuration: configuration, delegate: router, delegateQueue: queue)
        self.writerFactory = writerFactory
    }

    /// Ends the session (outstanding transfers are cancelled).
    func invalidate() { session.invalidateAndCancel() }

    /// Fetches `request.url` from `request.offset` into the part file, continuing `hasher` (which must already
    /// hold the first `offset` bytes of the part file).
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled (the bytes received so far are kept),
    ///   ``KioskError/server(status:code:message:retryAfter:)`` for an error answer (its body is never written),
    ///   ``KioskError/invalidResponse(_:)`` when the answer does not match the request, ``KioskError/network``,
    ///   ``KioskError/insufficientStorage(needed:available:)``.
    func fetch(_ request: FetchRequest, hasher: SHA256,
               progress: @escaping @Sendable (Int64) -> Void) async throws -> FetchOutcome {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = "GET"
        urlRequest.setValue("Bearer \(request.token)", forHTTPHeaderField: "Authorization")
        urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if request.offset > 0 {
            urlRequest.setValue("bytes=\(request.offset)-", forHTTPHeaderField: "Range")
            if let tag = request.entityTag { urlRequest.setValue(tag, forHTTPHeaderField: "If-Range") }
        }
        let task = session.dataTask(with: urlRequest)
        let handler = TransferHandler(request: request, hasher: hasher, writerFactory: writerFactory,
                                      progress: progress)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<FetchOutcome, any Error>) in
                handler.continuation = continuation
                router.register(handler, for: task.taskIdentifier)
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }
}

/// The session delegate: routes each task's callbacks to its ``TransferHandler``.
///
/// `@unchecked Sendable`: its only state is the `Locked` table; URLSession calls it on the serial delegate queue.
final class TransferRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let handlers = Locked<[Int: TransferHandler]>([:])

    func register(_ handler: TransferHandler, for identifier: Int) {
        handlers.withLock { $0[identifier] = handler }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let handler = handlers.withLock({ $0[dataTask.taskIdentifier] }) else { return }
        if !handler.receive(data, response: dataTask.response) { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let handler = handlers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        handler.complete(response: task.response, error: error)
    }
}

/// The state of one transfer.
///
/// Chunks arrive on the session's serial delegate queue and are copied into one of a few fixed blocks; a full
/// block goes to the transfer's I/O queue, which writes it and hashes it at the same time (two threads), then
/// hands the block back. Memory stays bounded (`blockCount × blockSize`) and hashing overlaps the network.
///
/// `@unchecked Sendable`: the receiving state is touched only on the delegate queue, the hashing and writing
/// state only on `ioQueue`, and what both read goes through `Locked`.
final class TransferHandler: @unchecked Sendable {
    private enum Mode {
        case undecided
        case content
        case errorBody(status: Int)
        case failed
    }

    static let blockSize = 2 << 20
    static let blockCount = 4

    let request: FetchRequest
    let writerFactory: FileWriterFactory
    let progress: @Sendable (Int64) -> Void
    var continuation: CheckedContinuation<FetchOutcome, any Error>?

    // Delegate queue state.
    private var mode = Mode.undecided
    private var current: UnsafeMutableRawBufferPointer?
    private var filled = 0
    private var received: Int64
    private var errorBody = Data()
    private var failure: KioskError?
    private var entityTag: String?
    private var restarted = false
    private var lastProgress: UInt64 = 0

    // I/O queue state.
    private let ioQueue = DispatchQueue(label: "KioskKit.TransferHandler.io")
    private var hasher: SHA256
    private var writer: (any PartFileWriter)?
    private var written: Int64

    // Shared.
    private let blocks: [UnsafeMutableRawBufferPointer]
    private let freeBlocks: Locked<[UnsafeMutableRawBufferPointer]>
    private let available = DispatchSemaphore(value: TransferHandler.blockCount)
    private let ioFailure = Locked<KioskError?>(nil)

    init(request: FetchRequest, hasher: SHA256, writerFactory: FileWriterFactory,
         progress: @escaping @Sendable (Int64) -> Void) {
        self.request = request
        self.hasher = hasher
        self.writerFactory = writerFactory
        self.progress = progress
        self.received = request.offset
        self.written = request.offset
        let blocks = (0..<Self.blockCount).map { _ in
            UnsafeMutableRawBufferPointer.allocate(byteCount: Self.blockSize, alignment: 64)
        }
        self.blocks = blocks
        self.freeBlocks = Locked(blocks)
    }

    deinit {
        writer?.close()
        for block in blocks { block.deallocate() }
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
            return
        }
        let type = (http.value(forHTTPHeaderField: "Content-Type") ?? "").lowercased()
        // An error body must never become content: a JSON answer for a file that is not JSON is refused here;
        // Content-Length, Content-Range and the SHA-256 check catch the rest.
        if type.contains("json"), !request.partURL.deletingPathExtension().pathExtension.lowercased().contains("json") {
            fail(.invalidResponse("a content request was answered with \(type) and status \(status)"))
            return
        }
        var startAt = request.offset
        if status == 206 {
            guard request.offset > 0 else {
                fail(.invalidResponse("206 for a request without Range"))
                return
            }
            let field = http.value(forHTTPHeaderField: "Content-Range") ?? ""
            guard case .satisfied(let range, let complete)? = ContentRange(parsing: field),
                  range.first == request.offset, range.last == request.expectedLength - 1,
                  complete == request.expectedLength
            else {
                fail(.invalidResponse(
                    "Content-Range '\(field)' does not match bytes=\(request.offset)- of \(request.expectedLength)"))
                return
            }
        } else if request.offset > 0 {
            // 200 where 206 was asked: the file changed (If-Range failed) or ranges are unsupported. Start over.
            startAt = 0
            restarted = true
            received = 0
        }
        if let length = http.value(forHTTPHeaderField: "Content-Length").flatMap(Int64.init),
           length != request.expectedLength - startAt {
            fail(.invalidResponse("Content-Length \(length) does not match the grant"))
            return
        }
        do {
            let opened = try writerFactory.open(request.partURL, startAt)
            let restart = restarted
            ioQueue.sync {
                writer = opened
                written = startAt
                if restart { hasher = SHA256() }
            }
            mode = .content
        } catch {
            fail(error)
        }
    }

    private func fail(_ error: KioskError) {
        if failure == nil { failure = error }
        mode = .failed
    }

    /// Takes one chunk. Returns `false` to cancel the task.
    func receive(_ data: Data, response: URLResponse?) -> Bool {
        if case .undecided = mode { decide(response) }
        switch mode {
        case .undecided, .failed:
            return false
        case .errorBody:
            if errorBody.count < 64 << 10 { errorBody.append(data.prefix(64 << 10 - errorBody.count)) }
            return true
        case .content:
            break
        }
        if let error = ioFailure.withLock({ $0 }) {
            fail(error)
            return false
        }
        guard received + Int64(data.count) <= request.expectedLength else {
            submit()
            fail(.invalidResponse("the server sent more bytes than the grant announces"))
            return false
        }
        data.withUnsafeBytes { (chunk: UnsafeRawBufferPointer) in
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
        received += Int64(data.count)
        let now = DispatchTime.now().uptimeNanoseconds
        if now &- lastProgress >= 50_000_000 {
            lastProgress = now
            progress(received)
        }
        return true
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
            guard count > 0, ioFailure.withLock({ $0 }) == nil, writer != nil else { return }
            let step = BlockStep(hasher: hasher)
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                let bytes = UnsafeRawBufferPointer(rebasing: block.buffer[0..<count])
                if index == 0, let writer = self.writer {
                    do { try writer.write(bytes) } catch { step.writeError = (error as? KioskError) ?? .fileSystem(path: "part", underlying: "\(error)") }
                } else {
                    step.hasher.update(bufferPointer: bytes)
                }
            }
            if let writeError = step.writeError {
                ioFailure.withLock { $0 = writeError }
                return
            }
            hasher = step.hasher
            written += Int64(count)
        }
    }

    /// The task ended.
    func complete(response: URLResponse?, error: (any Error)?) {
        if error == nil { decide(response) }
        submit()  // every taken block goes back (DispatchSemaphore must end at its initial value)
        // Wait for the I/O queue to finish every block, then close the file.
        let (bytesOnDisk, digest, ioError): (Int64, String, KioskError?) = ioQueue.sync {
            writer?.close()
            writer = nil
            return (written, FileHashing.hex(hasher.finalize()), ioFailure.withLock { $0 })
        }
        if failure == nil, let ioError { failure = ioError }
        let continuation = self.continuation
        self.continuation = nil
        progress(bytesOnDisk)
        guard let continuation else { return }
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
            let retryAfter = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After")
            continuation.resume(throwing: KioskError.fromResponse(
                status: status, body: errorBody, retryAfter: RetryAfter.seconds(from: retryAfter)))
        case .content:
            guard bytesOnDisk == request.expectedLength else {
                continuation.resume(throwing: KioskError.network(
                    code: URLError.networkConnectionLost.rawValue,
                    underlying: "the connection ended after \(bytesOnDisk) of \(request.expectedLength) bytes"))
                return
            }
            continuation.resume(returning: FetchOutcome(
                bytesOnDisk: bytesOnDisk, sha256: digest, entityTag: entityTag, restartedFromZero: restarted))
        case .undecided, .failed:
            continuation.resume(throwing: KioskError.invalidResponse("no usable answer"))
        }
    }
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

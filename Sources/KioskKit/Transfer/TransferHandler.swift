import Crypto
import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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
final class TransferHandler: URLSessionTaskRoute, @unchecked Sendable {
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

    static let blockSize = 1 << 20
    /// The block size of a chunk's transfer: several chunks of one file are in flight at once, each with blocks of
    /// its own (``TransferBlocks``, reused from chunk to chunk), so that memory stays about what one whole-file
    /// transfer takes.
    static let rangeBlockSize = 256 << 10
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
        let answer = RangeAnswer.judge(
            status: http.statusCode, field: { http.value(forHTTPHeaderField: $0) }, first: segmentFirst,
            last: segmentLast, of: request)
        switch answer {
        case .content(let last):
            segmentLast = last
            mode = .content
        case .errorBody(let status):
            mode = .errorBody(status: status)
            startErrorAnswerDeadline()
        case .fileChanged:
            mode = .fileChanged
        case .invalid(let error):
            fail(error)
        }
    }

    /// Ends the current request once its error answer has taken ``errorAnswerDeadline``, unless it ended first.
    private func startErrorAnswerDeadline() {
        let request = errorAnswer.withLock { $0.request }
        let deadline = DispatchTime.now() + errorAnswerDeadline
        URLSessionTaskRouter.stops.asyncAfter(deadline: deadline) { [weak self] in
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
        switch WriteAndHash.run(bytes, writer: writer, hasher: runningHash, parallel: delivery == .queued) {
        case .success(let hashed):
            hasher = hashed
            written += Int64(bytes.count)
        case .failure(let error):
            ioFailure.withLock { $0 = error }
        }
    }

    /// The error an error answer of `status` stands for, from the body kept and the response's `Retry-After`.
    private func errorAnswerFailure(status: Int, response: URLResponse?) -> KioskError {
        if status == 403, request.token == nil {
            // An object store refusing a presigned URL: it expired (or its signature no longer holds). A new grant
            // brings new URLs, so it is the refusal of an expired token; the store's body (XML) is not read.
            return .server(
                status: status, code: APIErrorCode.tokenExpired.rawValue,
                message: "The store refused the presigned URL: it expired or its signature no longer holds.",
                retryAfter: nil)
        }
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

/// A block handed from the delegate queue to the I/O queue. `@unchecked Sendable`: exactly one queue owns a
/// block at a time; ownership passes through the free list and its semaphore.
private struct Block: @unchecked Sendable {
    let buffer: UnsafeMutableRawBufferPointer
}

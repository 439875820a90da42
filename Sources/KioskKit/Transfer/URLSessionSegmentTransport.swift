import Crypto
import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Content through a URLSession whose serial delegate queue calls the handlers.
final class URLSessionSegmentTransport: SegmentTransport {
    let session: URLSession
    let delivery = BodyDelivery.queued
    let timeout: TimeInterval
    private let router: URLSessionTaskRouter

    /// A session that opens at most `maximumConnections` connections to a host, made from `sessionConfiguration`
    /// when given.
    init(timeout: TimeInterval, maximumConnections: Int, sessionConfiguration: URLSessionConfiguration?) {
        let configuration = URLSessionConfiguration.kiosk(
            base: sessionConfiguration, timeout: timeout, cookies: false)
        configuration.httpMaximumConnectionsPerHost = maximumConnections
        let router = URLSessionTaskRouter()
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

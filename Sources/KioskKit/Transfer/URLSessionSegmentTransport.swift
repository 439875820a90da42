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

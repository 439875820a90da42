import Foundation
import KioskCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One JSON request in flight: its body so far, counted against the limit as it arrives, and its deadline.
///
/// `@unchecked Sendable`: `body` is touched only on the session's serial delegate queue; what the deadline timer
/// and the delegate queue share goes through `Locked`.
final class PendingResponse: URLSessionTaskRoute, @unchecked Sendable {
    typealias Continuation = CheckedContinuation<Result<(Data, URLResponse), KioskError>, Never>

    private let limit: Int
    private let deadline: TimeInterval
    private var body = Data()
    private let failure = Locked<KioskError?>(nil)
    private let continuation = Locked<Continuation?>(nil)
    private let timer = Locked<DispatchWorkItem?>(nil)

    init(limit: Int, deadline: TimeInterval) {
        self.limit = limit
        self.deadline = deadline
        // Reserved, not touched: pages become resident only as bytes arrive, and the body never moves while it
        // grows (a growing buffer that is copied to a larger one holds both, and leaves the allocator fragmented).
        body.reserveCapacity(min(limit, 64 << 20))
    }

    /// Registers and starts `task`, and arms the deadline, which fails the request and cancels the task.
    func start(_ task: URLSessionDataTask, continuation: Continuation, register: () -> Void) {
        self.continuation.withLock { $0 = continuation }
        let seconds = deadline
        let expiry = DispatchWorkItem { [weak self, weak task] in
            self?.fail(
                .network(
                    code: URLError.timedOut.rawValue,
                    underlying: "the server did not finish its answer within \(Int(seconds)) s"))
            task?.cancel()
        }
        timer.withLock { $0 = expiry }
        register()
        task.resume()
        DispatchQueue.global().asyncAfter(deadline: .now() + deadline, execute: expiry)
    }

    /// The caller's task was cancelled: ends the wait at once and cancels the request (before it starts, too).
    func cancel(_ task: URLSessionDataTask) {
        fail(.network(code: URLError.cancelled.rawValue, underlying: "the request was cancelled"))
        task.cancel()
    }

    /// Takes decoded bytes. Returns `false` when the task must be cancelled: the body would pass the limit, or the
    /// deadline passed.
    func receive(_ data: Data, response: URLResponse?) -> Bool {
        guard failure.withLock({ $0 }) == nil else { return false }
        guard data.count <= limit - body.count else {
            fail(.responseTooLarge(limit: limit))
            body = Data()
            return false
        }
        body.append(data)
        return true
    }

    /// The task ended: resumes the waiting request once.
    func complete(response: URLResponse?, error: (any Error)?) {
        timer.withLock { $0 }?.cancel()
        let result: Result<(Data, URLResponse), KioskError>
        if let failure = failure.withLock({ $0 }) {
            result = .failure(failure)
        } else if let error {
            result = .failure(APIClient.networkError(error))
        } else if let response {
            result = .success((body, response))
        } else {
            result = .failure(.invalidResponse("no answer"))
        }
        body = Data()
        continuation.withLock { continuation in
            continuation?.resume(returning: result)
            continuation = nil
        }
    }

    /// Records the first failure and ends the wait at once: the task's own end may come much later (URLSession
    /// delivers what it already received before it cancels).
    private func fail(_ error: KioskError) {
        let first = failure.withLock { failure -> Bool in
            guard failure == nil else { return false }
            failure = error
            return true
        }
        guard first else { return }
        continuation.withLock { continuation in
            continuation?.resume(returning: .failure(error))
            continuation = nil
        }
    }
}

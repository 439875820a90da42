import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a ``URLSessionTaskRouter`` hands one task's callbacks to: a content transfer (``TransferHandler``) or a JSON
/// request (``PendingResponse``).
protocol URLSessionTaskRoute: AnyObject, Sendable {
    /// Takes a piece of the task's body. Returns `false` when it wants no more of it: the task is then cancelled.
    func receive(_ data: Data, response: URLResponse?) -> Bool
    /// The task ended, with its response and its error.
    func complete(response: URLResponse?, error: (any Error)?)
}

/// The delegate of each of KioskKit's URLSessions: routes each task's callbacks to its ``URLSessionTaskRoute``,
/// cancels a task (once) when its route wants no more of it, and follows no redirect.
///
/// `@unchecked Sendable`: its only state is the `Locked` table; URLSession calls it on the serial delegate queue.
final class URLSessionTaskRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// Where tasks are cancelled: off the delegate queue, on a serial queue of its own, which gets a thread even when
    /// the global queue's few threads (one per CPU) are all busy. swift-corelibs-foundation cancels synchronously on
    /// the session's queue, which may be waiting for the delegate queue (``BoundedOperationQueue``).
    static let stops = DispatchQueue(label: "KioskKit.URLSessionTaskRouter.stops")

    private struct Routes {
        var routes: [Int: any URLSessionTaskRoute] = [:]
        /// Tasks whose cancellation was asked for (once each).
        var stopping: Set<Int> = []
    }

    private let table = Locked(Routes())

    /// Sends the callbacks of the task `identifier` to `route`, until the task completes.
    func register(_ route: any URLSessionTaskRoute, for identifier: Int) {
        table.withLock { $0.routes[identifier] = route }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let identifier = dataTask.taskIdentifier
        guard let route = table.withLock({ $0.routes[identifier] }),
            !route.receive(data, response: dataTask.response),
            table.withLock({ $0.stopping.insert(identifier).inserted })
        else { return }
        Self.stops.async { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let identifier = task.taskIdentifier
        guard
            let route = table.withLock({ table in
                table.stopping.remove(identifier)
                return table.routes.removeValue(forKey: identifier)
            })
        else { return }
        route.complete(response: task.response, error: error)
    }

    /// Redirects are not followed: every request of a KioskKit client carries a purchase proof, a grant's token or
    /// its installation's ID, which a redirect would take to another origin (a 307 even sends the body again), and a
    /// grant's URLs are checked to be on the server's own origin. The 3xx is the answer: it fails as its status (a
    /// subchunk range is then fetched with its chunk).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``StreamingTransport`` on URLSession: every platform, and Linux when the app gives a session configuration.
/// The session's delegate (``URLSessionTaskRouter``) follows no redirect; each task's callbacks become a stream
/// the downloading task reads. URLSession does not wait for that reader: a disk much slower than the network lets
/// pieces queue in memory.
final class URLSessionStreamingTransport: StreamingTransport {
    private let session: URLSession
    private let router = URLSessionTaskRouter()

    /// A session made from `configuration` (or an ephemeral one, with `timeout` as its idle timeout), without
    /// cookies or a URL cache.
    init(timeout: TimeInterval, configuration: URLSessionConfiguration?) {
        let sessionConfiguration = URLSessionConfiguration.kiosk(base: configuration, timeout: timeout, cookies: false)
        let queue = BoundedOperationQueue(limit: 16)
        queue.name = "KioskKit.URLDownload"
        session = URLSession(configuration: sessionConfiguration, delegate: router, delegateQueue: queue)
    }

    func get(_ url: URL, headers: [String: String]) async throws(KioskError) -> (AnswerHead, any AnswerBody) {
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let task = session.dataTask(with: request)
        let (events, continuation) = AsyncThrowingStream.makeStream(of: StreamRoute.Event.self)
        router.register(StreamRoute(continuation), for: task.taskIdentifier)
        let body = URLSessionAnswerBody(task: task, events: events, url: url)
        task.resume()
        return (try await body.head(), body)
    }

    func shutdown() async { session.invalidateAndCancel() }
}

/// One task's callbacks as a stream: the head (with the first piece, or at the end of a body-less answer), the
/// pieces, the end.
final class StreamRoute: URLSessionTaskRoute {
    enum Event: Sendable {
        case head(AnswerHead)
        case data(Data)
    }

    private let continuation: AsyncThrowingStream<Event, any Error>.Continuation
    private let sentHead = Locked(false)

    init(_ continuation: AsyncThrowingStream<Event, any Error>.Continuation) { self.continuation = continuation }

    func receive(_ data: Data, response: URLResponse?) -> Bool {
        sendHead(response)
        continuation.yield(.data(data))
        return true
    }

    func complete(response: URLResponse?, error: (any Error)?) {
        if error == nil { sendHead(response) }
        continuation.finish(throwing: error)
    }

    private func sendHead(_ response: URLResponse?) {
        guard
            sentHead.withLock({ sent in
                defer { sent = true }; return !sent
            })
        else { return }
        guard let http = response as? HTTPURLResponse else { return }
        var fields: [String: String] = [:]
        for case (let name as String, let value as String) in http.allHeaderFields { fields[name] = value }
        continuation.yield(.head(AnswerHead(status: http.statusCode, fields: fields)))
    }
}

/// The body of a URLSession task, read from its ``StreamRoute``.
final class URLSessionAnswerBody: AnswerBody {
    private let task: URLSessionDataTask
    private var events: AsyncThrowingStream<StreamRoute.Event, any Error>.AsyncIterator
    private let url: URL

    init(task: URLSessionDataTask, events: AsyncThrowingStream<StreamRoute.Event, any Error>, url: URL) {
        self.task = task
        self.events = events.makeAsyncIterator()
        self.url = url
    }

    /// Waits for the head.
    func head() async throws(KioskError) -> AnswerHead {
        do {
            while let event = try await events.next() {
                if case .head(let head) = event { return head }
            }
        } catch {
            throw KioskError.transport(error, url: url)
        }
        throw KioskError.invalidResponse("the answer had no HTTP head")
    }

    func next() async throws(KioskError) -> Data? {
        do {
            while let event = try await events.next() {
                if case .data(let data) = event { return data }
            }
            return nil
        } catch {
            throw KioskError.transport(error, url: url)
        }
    }

    func cancel() { task.cancel() }

    deinit { task.cancel() }
}

#if canImport(AsyncHTTPClient) && os(Linux)
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1
    import NIOPosix

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    /// Content through AsyncHTTPClient (SwiftNIO), on Linux when the app gives no session configuration: each piece
    /// of the body (the socket's reads, up to 64 KiB and more) is written and hashed on the event loop that read it
    /// (``BodyDelivery/inline``), which reads no more of that connection meanwhile: back-pressure without a queue,
    /// a copy or a thread hand-off. The event loops are the transport's own, so that the waits on the disk never
    /// hold up anyone else's connections. swift-corelibs-foundation's URLSession hands over at most 16 KiB per
    /// callback, each as a `Data` through an `OperationQueue`; that cost more than hashing the bytes did.
    ///
    /// HTTP/1.1 only, no redirects, at most `maximumConnections` connections to a host, and `timeout` as the idle
    /// timeout of a request (connecting, and any wait for the next bytes). Errors become what URLSession's would
    /// (``TransferHandler/complete(response:error:)`` turns them into ``KioskError/network(code:underlying:)``).
    final class NIOSegmentTransport: SegmentTransport {
        /// HTTP/1.1, no decompression, the timeouts and the connection limit.
        let configuration: HTTPClient.Configuration
        let delivery = BodyDelivery.inline
        let timeout: TimeInterval
        /// The transport's event loops (``eventLoopCount(maximumConnections:)``).
        let group: MultiThreadedEventLoopGroup
        private let client: HTTPClient
        private let isShutDown = Locked(false)

        init(timeout: TimeInterval, maximumConnections: Int) {
            self.timeout = timeout
            // A grant's URLs are checked to be on the server's own origin; a redirect would take the bearer token
            // elsewhere. It is answered as the status it is.
            var configuration = HTTPClient.Configuration.kioskDownloads(timeout: timeout)
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(1, maximumConnections)
            group = MultiThreadedEventLoopGroup(
                numberOfThreads: Self.eventLoopCount(maximumConnections: maximumConnections))
            client = HTTPClient(eventLoopGroupProvider: .shared(group), configuration: configuration)
            self.configuration = configuration
        }

        deinit { invalidate() }

        /// One event loop per connection, up to 16: a loop waits while it writes and hashes, and a connection that
        /// shares its loop waits with it. Measured on 2 CPUs, 4 connections to a loopback server: a 1 GiB file in
        /// 1.6 s on 4 loops, 1.9 s on 2 (BENCHMARKS.md).
        static func eventLoopCount(maximumConnections: Int) -> Int { min(16, max(1, maximumConnections)) }

        /// Shuts the client down (its requests fail as cancelled), then its event loops; once.
        func invalidate() {
            let first = isShutDown.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            guard first else { return }
            let group = self.group
            client.shutdown(queue: .global()) { _ in group.shutdownGracefully { _ in } }
        }

        func get(
            _ url: URL, headers: [String: String], into handler: TransferHandler, first: Int64, last: Int64
        ) async throws -> SegmentOutcome {
            let request: HTTPClient.Request
            do {
                request = try HTTPClient.Request(url: url, method: .GET, headers: HTTPHeaders(Array(headers)))
            } catch {
                throw KioskError.invalidArgument("'\(url.absoluteString)' is not a URL this client can fetch.")
            }
            let delegate = SegmentDelegate(url: url, handler: handler)
            let start = NIOSegmentStart()
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation {
                    (continuation: CheckedContinuation<SegmentOutcome, any Error>) in
                    handler.begin(first: first, last: last, continuation: continuation) { start.cancel() }
                    // Never on a client that is shutting down: its event loops may be gone, and a request handed to
                    // them would never end. A request started before the shutdown is failed by it.
                    let started: Bool? = isShutDown.withLock { shutDown in
                        guard !shutDown else { return nil }
                        return start.start {
                            let task = client.execute(request: request, delegate: delegate)
                            task.futureResult.whenComplete { result in delegate.finish(result) }
                            return task
                        }
                    }
                    switch started {
                    case nil: handler.abandon(throwing: KioskError.clientClosed)
                    case false?: handler.abandon(throwing: CancellationError())
                    case true?: break
                    }
                }
            } onCancel: {
                start.cancel()
            }
        }
    }

    extension HTTPClient.Configuration {
        /// What KioskKit's downloads (``NIOSegmentTransport``, ``NIOStreamingTransport``) ask of AsyncHTTPClient:
        /// HTTP/1.1; the bytes as sent (no decompression); no redirect (a 3xx is answered as the status it is);
        /// `timeout` seconds as the connect and the idle read timeout; idle connections kept 60 s; and a connection
        /// that cannot be made fails its request at once, as with URLSession: retrying is the download's own policy
        /// (``RetryPolicy``), which waits for a server that is gone without using up attempts (AsyncHTTPClient's
        /// own retries held the request until the connect timeout, 60 s by default).
        static func kioskDownloads(timeout: TimeInterval) -> HTTPClient.Configuration {
            let idle = TimeAmount.milliseconds(Int64(max(0.001, timeout) * 1000))
            var configuration = HTTPClient.Configuration()
            configuration.httpVersion = .http1Only
            configuration.decompression = .disabled
            configuration.redirectConfiguration = .disallow
            configuration.timeout = HTTPClient.Configuration.Timeout(connect: idle, read: idle)
            configuration.connectionPool = HTTPClient.Configuration.ConnectionPool(idleTimeout: .seconds(60))
            configuration.connectionPool.retryConnectionEstablishment = false
            return configuration
        }
    }

    /// Starts a segment's AsyncHTTPClient task so that a cancellation cannot fall between the start and the wait (as
    /// ``SegmentStart`` does for URLSession).
    final class NIOSegmentStart: Sendable {
        private enum State {
            case pending
            case started(HTTPClient.Task<Void>)
            case cancelled
        }

        private let state = Locked(State.pending)

        /// Starts the task (`start`), unless the fetch was cancelled first. Returns whether it started.
        func start(_ start: () -> HTTPClient.Task<Void>) -> Bool {
            state.withLock { state in
                guard case .pending = state else { return false }
                state = .started(start())
                return true
            }
        }

        /// Cancels the task if it started; otherwise makes sure it never does.
        func cancel() {
            let task: HTTPClient.Task<Void>? = state.withLock { state in
                defer { state = .cancelled }
                if case .started(let task) = state { return task }
                return nil
            }
            task?.cancel()
        }
    }

    /// Feeds one request's answer to its ``TransferHandler`` on the request's event loop, each body part as it comes
    /// (the next read waits until the handler took it), then the end once, after every body part.
    ///
    /// `@unchecked Sendable`: `response` and the handler are touched only on the task's event loop.
    final class SegmentDelegate: HTTPClientResponseDelegate, @unchecked Sendable {
        typealias Response = Void

        private let url: URL
        private let handler: TransferHandler
        private var response: HTTPURLResponse?

        init(url: URL, handler: TransferHandler) {
            self.url = url
            self.handler = handler
        }

        func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            var fields: [String: String] = [:]
            for (name, value) in head.headers {
                fields[name] = fields[name].map { "\($0), \(value)" } ?? value
            }
            response = HTTPURLResponse(
                url: url, statusCode: Int(head.status.code), httpVersion: "HTTP/1.1", headerFields: fields)
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            let keep = buffer.withUnsafeReadableBytes { handler.receive($0, response: response) }
            if !keep { task.cancel() }
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didFinishRequest(task: HTTPClient.Task<Void>) throws {}

        /// The request ended (on the task's event loop, after every body part): the handler completes.
        func finish(_ result: Result<Void, any Error>) {
            switch result {
            case .success:
                handler.complete(response: response, error: nil)
            case .failure(let error):
                handler.complete(response: response, error: Self.urlError(error))
            }
        }

        /// The URLSession error an AsyncHTTPClient or NIO error stands for.
        static func urlError(_ error: any Error) -> URLError {
            let code: URLError.Code
            switch error {
            case let error as HTTPClientError:
                switch error {
                case .cancelled: code = .cancelled
                case .readTimeout, .connectTimeout, .deadlineExceeded: code = .timedOut
                case .remoteConnectionClosed: code = .networkConnectionLost
                default: code = .networkConnectionLost
                }
            case is ChannelError:
                code = .networkConnectionLost
            case let error as IOError where error.errnoCode == ECONNREFUSED:
                code = .cannotConnectToHost
            default:
                code = .networkConnectionLost
            }
            return URLError(code, userInfo: [NSLocalizedDescriptionKey: "\(error)"])
        }
    }
#endif

#if canImport(AsyncHTTPClient) && os(Linux)
    import AsyncHTTPClient
    import Foundation
    import NIOCore

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    /// A ``StreamingTransport`` on AsyncHTTPClient, on Linux when the app gives no session configuration (as for
    /// content: ``NIOSegmentTransport``): the body is read as the downloading task asks for it, so a slow disk slows
    /// the connection instead of filling memory. HTTP/1.1, no redirects, no decompression; `timeout` is the idle
    /// timeout (connecting, the head, and any wait for the body's next bytes).
    final class NIOStreamingTransport: StreamingTransport {
        private let client: HTTPClient
        private let timeout: TimeAmount

        init(timeout: TimeInterval) {
            client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .kioskDownloads(timeout: timeout))
            self.timeout = .milliseconds(Int64(max(0.001, timeout) * 1000))
        }

        func get(_ url: URL, headers: [String: String]) async throws(KioskError) -> (AnswerHead, any AnswerBody) {
            var request = HTTPClientRequest(url: url.absoluteString)
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            do {
                // The deadline covers the wait for the head; the body's waits are the configuration's read timeout.
                let response = try await client.execute(request, timeout: timeout)
                let head = AnswerHead(
                    status: Int(response.status.code), fields: response.headers.map { ($0.name, $0.value) })
                return (head, NIOAnswerBody(response.body, url))
            } catch {
                throw Self.failure(error, url: url)
            }
        }

        func shutdown() async { try? await client.shutdown() }

        /// What an AsyncHTTPClient error of a request for `url` is reported as: cancellation as cancellation, the
        /// rest as the URLSession error it stands for (``SegmentDelegate/urlError(_:)``).
        static func failure(_ error: any Error, url: URL) -> KioskError {
            KioskError.transport(error is CancellationError ? error : SegmentDelegate.urlError(error), url: url)
        }
    }

    /// The body of an AsyncHTTPClient response. Dropping it (``cancel()``) ends its request and closes the
    /// connection.
    final class NIOAnswerBody: AnswerBody {
        private var iterator: HTTPClientResponse.Body.AsyncIterator?
        private let url: URL

        init(_ body: HTTPClientResponse.Body, _ url: URL) {
            iterator = body.makeAsyncIterator()
            self.url = url
        }

        func next() async throws(KioskError) -> Data? {
            guard var reading = iterator else { return nil }
            do {
                let buffer = try await reading.next()
                iterator = buffer == nil ? nil : reading
                return buffer.map { Data($0.readableBytesView) }
            } catch {
                iterator = nil
                throw NIOStreamingTransport.failure(error, url: url)
            }
        }

        func cancel() { iterator = nil }
    }
#endif

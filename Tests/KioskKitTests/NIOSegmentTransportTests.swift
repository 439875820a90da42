#if canImport(AsyncHTTPClient) && os(Linux)
    import AsyncHTTPClient
    import Crypto
    import Foundation
    import NIOCore
    import Testing

    @testable import KioskKit

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    /// #9: AsyncHTTPClient's failures become the URLSession errors the rest of KioskKit already tells apart
    /// (cancelled: not a failure; the others: ``KioskError/network(code:underlying:)``, retried by the rule).
    @Suite("Content through AsyncHTTPClient")
    struct NIOSegmentTransportTests {
        @Test func failuresBecomeTheURLErrorsOfURLSession() {
            let cases: [(any Error, URLError.Code)] = [
                (HTTPClientError.cancelled, .cancelled),
                (HTTPClientError.readTimeout, .timedOut),
                (HTTPClientError.connectTimeout, .timedOut),
                (HTTPClientError.deadlineExceeded, .timedOut),
                (HTTPClientError.remoteConnectionClosed, .networkConnectionLost),
                (ChannelError.ioOnClosedChannel, .networkConnectionLost),
                (IOError(errnoCode: ECONNREFUSED, reason: "connect"), .cannotConnectToHost),
                (IOError(errnoCode: ECONNRESET, reason: "read"), .networkConnectionLost),
            ]
            for (error, code) in cases {
                #expect(SegmentDelegate.urlError(error).code == code, "\(error)")
            }
        }

        /// One event loop per connection (a loop waits while it writes and hashes), at least 1, at most 16.
        @Test func oneEventLoopPerConnectionUpTo16() {
            #expect(NIOSegmentTransport.eventLoopCount(maximumConnections: 0) == 1)
            #expect(NIOSegmentTransport.eventLoopCount(maximumConnections: 4) == 4)
            #expect(NIOSegmentTransport.eventLoopCount(maximumConnections: 8) == 8)
            #expect(NIOSegmentTransport.eventLoopCount(maximumConnections: 100) == 16)
            let transport = NIOSegmentTransport(timeout: 5, maximumConnections: 3)
            #expect(Array(transport.group.makeIterator()).count == 3)
            transport.invalidate()
        }

        /// Invalidating twice (``KioskClient/close()``, then the transport going away) shuts down once; a request
        /// after it fails at once instead of waiting.
        @Test func aRequestAfterInvalidateFailsAtOnce() async throws {
            let transport = NIOSegmentTransport(timeout: 60, maximumConnections: 2)
            transport.invalidate()
            transport.invalidate()
            let fetcher = FileFetcher(transport: transport, writerFactory: .posix)
            let part = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-\(UUID().uuidString).part")
            defer { try? FileManager.default.removeItem(at: part) }
            let request = FetchRequest(
                url: URL(string: "http://127.0.0.1:9/content.bin")!, token: "t", offset: 0, expectedLength: 10,
                partURL: part)
            await #expect(throws: (any Error).self) {
                _ = try await fetcher.fetch(request, hasher: SHA256(), progress: { _ in })
            }
        }
    }
#endif

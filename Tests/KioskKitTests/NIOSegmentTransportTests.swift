#if canImport(AsyncHTTPClient) && os(Linux)
    import AsyncHTTPClient
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
    }
#endif

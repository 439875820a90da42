import Foundation
import Testing

@testable import KioskKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What KioskKit keeps of the app's `URLSessionConfiguration`, and what it replaces.
@Suite("Session configuration")
struct SessionConfigurationTests {
    @Test func theAppsSettingsAreKeptAndWhatDownloadsNeedReplacesTheRest() throws {
        let app = URLSessionConfiguration.default
        app.httpAdditionalHeaders = ["X-App-Build": "4711"]
        app.timeoutIntervalForRequest = 17
        app.timeoutIntervalForResource = 600
        app.httpCookieAcceptPolicy = .never
        app.httpMaximumConnectionsPerHost = 1
        app.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        app.requestCachePolicy = .returnCacheDataElseLoad

        let fetcher = FileFetcher(
            timeout: 60, maximumConnections: 8, writerFactory: .posix, sessionConfiguration: app)
        let api = APIClient(
            serverURL: URL(string: "http://127.0.0.1:1")!, idleTimeout: 60,
            limits: APIClient.Limits(maximumResponseSize: 1 << 20, deadline: 60, grant: GrantLimits()),
            sessionConfiguration: app)
        defer {
            fetcher.invalidate()
            api.invalidate()
        }
        // With the app's configuration, content goes through URLSession on every platform.
        let content = try #require(fetcher.transport as? URLSessionSegmentTransport)
        for session in [content.session.configuration, api.session.configuration] {
            #expect(session.httpAdditionalHeaders?["X-App-Build"] as? String == "4711")
            #expect(session.timeoutIntervalForRequest == 17)
            #expect(session.timeoutIntervalForResource == 600)
            #expect(session.httpCookieAcceptPolicy == .never)
            #expect(session.urlCache == nil)
            #expect(session.requestCachePolicy == .reloadIgnoringLocalCacheData)
        }
        #expect(content.session.configuration.httpMaximumConnectionsPerHost == 8)
        // Cookies on content requests only when the app's policy says so for its own sessions: never on content.
        #expect(api.session.configuration.httpShouldSetCookies == app.httpShouldSetCookies)
        #expect(content.session.configuration.httpShouldSetCookies == false)
        // The app's object is copied, never changed.
        #expect(app.urlCache != nil)
        #expect(app.httpMaximumConnectionsPerHost == 1)
        #expect(app.requestCachePolicy == .returnCacheDataElseLoad)
    }

    @Test func withoutOneTheSessionsAreEphemeralWithTheRequestTimeout() {
        let transport = URLSessionSegmentTransport(timeout: 23, maximumConnections: 3, sessionConfiguration: nil)
        defer { transport.invalidate() }
        let session = transport.session.configuration
        #expect(session.timeoutIntervalForRequest == 23)
        #expect(session.httpCookieStorage == nil)
        #expect(session.httpCookieAcceptPolicy == .never)
        #expect(session.httpShouldSetCookies == false)
        #expect(session.urlCache == nil)
        #expect(session.httpMaximumConnectionsPerHost == 3)
    }

    /// Without the app's configuration, content on Linux goes through AsyncHTTPClient, with the request timeout as
    /// its idle timeout and the connection limit; elsewhere through the ephemeral URLSession above.
    @Test func withoutOneContentUsesTheFastestTransportOfThePlatform() throws {
        let fetcher = FileFetcher(timeout: 23, maximumConnections: 3, writerFactory: .posix, environment: [:])
        defer { fetcher.invalidate() }
        #if canImport(AsyncHTTPClient) && os(Linux)
            let transport = try #require(fetcher.transport as? NIOSegmentTransport)
            #expect(transport.configuration.timeout.read == .seconds(23))
            #expect(transport.configuration.timeout.connect == .seconds(23))
            #expect(transport.configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit == 3)
            #expect(transport.configuration.httpVersion == .http1Only)
        #else
            #expect(fetcher.transport is URLSessionSegmentTransport)
        #endif
    }

    /// A proxy in the environment keeps content on URLSession, whose libcurl honours it.
    @Test(arguments: ["http_proxy", "HTTPS_PROXY", "all_proxy"])
    func aProxyInTheEnvironmentKeepsURLSession(variable: String) {
        let fetcher = FileFetcher(
            timeout: 23, maximumConnections: 3, writerFactory: .posix,
            environment: [variable: "http://proxy.example:3128", "no_proxy": "localhost"])
        defer { fetcher.invalidate() }
        #expect(fetcher.transport is URLSessionSegmentTransport)
        #expect(FileFetcher.namesAProxy([variable: "http://proxy.example:3128"]))
        #expect(!FileFetcher.namesAProxy([variable: "", "no_proxy": "*"]))
    }
}

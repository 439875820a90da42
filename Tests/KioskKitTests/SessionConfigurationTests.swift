import Foundation
import Testing

@testable import KioskKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What KioskKit keeps of the app's `URLSessionConfiguration`, and what it replaces.
@Suite("Session configuration")
struct SessionConfigurationTests {
    @Test func theAppsSettingsAreKeptAndWhatDownloadsNeedReplacesTheRest() {
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
        for session in [fetcher.session.configuration, api.session.configuration] {
            #expect(session.httpAdditionalHeaders?["X-App-Build"] as? String == "4711")
            #expect(session.timeoutIntervalForRequest == 17)
            #expect(session.timeoutIntervalForResource == 600)
            #expect(session.httpCookieAcceptPolicy == .never)
            #expect(session.urlCache == nil)
            #expect(session.requestCachePolicy == .reloadIgnoringLocalCacheData)
        }
        #expect(fetcher.session.configuration.httpMaximumConnectionsPerHost == 8)
        // Cookies on content requests only when the app's policy says so for its own sessions: never on content.
        #expect(api.session.configuration.httpShouldSetCookies == app.httpShouldSetCookies)
        #expect(fetcher.session.configuration.httpShouldSetCookies == false)
        // The app's object is copied, never changed.
        #expect(app.urlCache != nil)
        #expect(app.httpMaximumConnectionsPerHost == 1)
        #expect(app.requestCachePolicy == .returnCacheDataElseLoad)
    }

    @Test func withoutOneTheSessionsAreEphemeralWithTheRequestTimeout() {
        let fetcher = FileFetcher(timeout: 23, maximumConnections: 3, writerFactory: .posix)
        defer { fetcher.invalidate() }
        let session = fetcher.session.configuration
        #expect(session.timeoutIntervalForRequest == 23)
        #expect(session.httpCookieStorage == nil)
        #expect(session.httpCookieAcceptPolicy == .never)
        #expect(session.httpShouldSetCookies == false)
        #expect(session.urlCache == nil)
        #expect(session.httpMaximumConnectionsPerHost == 3)
    }
}

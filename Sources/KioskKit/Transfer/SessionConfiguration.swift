import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionConfiguration {
    /// The configuration of one of KioskKit's sessions, before what the session itself needs: a copy of the app's
    /// `base` (its headers, timeouts, cookie policy, proxies and TLS settings kept) or, without one, an ephemeral
    /// configuration without cookies and with the idle timeout `timeout`; either way without a URL cache (content is
    /// verified and kept by KioskKit, JSON answers are revalidated by KioskKit itself). With `cookies: false` (the
    /// content session: its requests carry a grant token), cookies are neither sent nor accepted, whatever `base`
    /// says: FoundationNetworking otherwise parses every response header line for cookies.
    static func kiosk(base: URLSessionConfiguration?, timeout: TimeInterval, cookies: Bool = true)
        -> URLSessionConfiguration
    {
        let configuration: URLSessionConfiguration
        if let base, let copy = base.copy() as? URLSessionConfiguration {
            configuration = copy
        } else {
            configuration = .ephemeral
            configuration.timeoutIntervalForRequest = timeout
            configuration.withoutCookies()
        }
        if !cookies { configuration.withoutCookies() }
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }

    /// No cookie store, none sent, none accepted.
    private func withoutCookies() {
        httpCookieStorage = nil
        httpShouldSetCookies = false
        httpCookieAcceptPolicy = .never
    }
}

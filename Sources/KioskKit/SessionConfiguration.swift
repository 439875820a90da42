import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionConfiguration {
    /// The configuration of one of KioskKit's sessions, before what the session itself needs: a copy of the app's
    /// `base` (its headers, timeouts, cookie policy, proxies and TLS settings kept) or, without one, an ephemeral
    /// configuration without cookie storage and with the idle timeout `timeout`; either way without a URL cache
    /// (content is verified and kept by KioskKit, JSON answers are revalidated by KioskKit itself).
    static func kiosk(base: URLSessionConfiguration?, timeout: TimeInterval) -> URLSessionConfiguration {
        let configuration: URLSessionConfiguration
        if let base, let copy = base.copy() as? URLSessionConfiguration {
            configuration = copy
        } else {
            configuration = .ephemeral
            configuration.timeoutIntervalForRequest = timeout
            configuration.httpCookieStorage = nil
        }
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }
}

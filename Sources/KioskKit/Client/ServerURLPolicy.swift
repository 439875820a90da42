import Foundation
import KioskCore

/// Which server URLs a client accepts: `https://`, or `http://` to a loopback host (`localhost`, 127.0.0.0/8,
/// `::1`), as App Transport Security does; other `http://` hosts only when the app opts in.
enum ServerURLPolicy {
    /// Refuses a server URL that is not http(s) with a host, or plain `http://` to a remote host without the
    /// opt-in.
    static func check(_ url: URL, allowsInsecureHTTP: Bool) throws(KioskError) {
        let scheme = url.scheme?.lowercased()
        guard scheme == "https" || scheme == "http", let host = url.host, !host.isEmpty,
            URLComponents(url: url, resolvingAgainstBaseURL: false) != nil
        else { throw .invalidArgument("'\(url.absoluteString)' is not an http:// or https:// server URL.") }
        if scheme == "http", !allowsInsecureHTTP, !LoopbackAddress.contains(host) {
            throw .insecureServerURL(host: host)
        }
    }
}

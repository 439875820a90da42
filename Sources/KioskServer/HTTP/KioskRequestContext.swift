import Hummingbird
import NIOCore

/// The per-request context of the Kiosk routes: Hummingbird's core context plus the connection, which the content
/// route needs to send files with `sendfile(2)`.
public struct KioskRequestContext: RequestContext {
    /// Hummingbird's storage (logger, parameters, endpoint path).
    public var coreContext: CoreRequestContextStorage
    /// The connection the request came in on.
    public let channel: any Channel

    /// Creates the context for a request on `source.channel`.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}

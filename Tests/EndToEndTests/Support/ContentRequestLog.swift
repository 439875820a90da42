import Logging
import Synchronization

/// The server's content requests counted by URL path, read from its log (give ``logger`` to
/// ``TestServer/start(content:logger:configure:)``): the `content request` lines at `debug`, and the `fault injected`
/// lines of `fault=corrupt`, joined to their request by `request_id`. No proxy between client and server.
final class ContentRequestLog: Sendable {
    private struct State {
        var counts: [String: Int] = [:]
        var total = 0
        var pathByRequest: [String: String] = [:]
        var corrupted: [String] = []
    }

    private let state = Mutex(State())

    /// A logger at `debug` that feeds this log (and drops every other line).
    var logger: Logger {
        var logger = Logger(label: "kiosk.test.content-requests") { _ in Handler(log: self) }
        logger.logLevel = .debug
        return logger
    }

    /// Content requests so far, by URL path (`/v1/content/<product>/<version>/<file path>`).
    var counts: [String: Int] { state.withLock { $0.counts } }
    /// Content requests so far.
    var total: Int { state.withLock { $0.total } }
    /// The URL paths of the responses whose bytes were corrupted, once per corrupted response.
    var corruptedPaths: [String] { state.withLock { $0.corrupted } }

    fileprivate func record(_ message: String, metadata: Logger.Metadata) {
        guard case .string(let id)? = metadata["request_id"] else { return }
        switch message {
        case "content request":
            guard case .string(let path)? = metadata["path"] else { return }
            state.withLock { state in
                state.counts[path, default: 0] += 1
                state.total += 1
                state.pathByRequest[id] = path
            }
        case "fault injected" where metadata["fault"] == .string("corrupt"):
            state.withLock { state in
                if let path = state.pathByRequest[id] { state.corrupted.append(path) }
            }
        default:
            break
        }
    }

    private struct Handler: LogHandler {
        let log: ContentRequestLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            log.record(
                event.message.description, metadata: metadata.merging(event.metadata ?? [:]) { _, new in new })
        }
    }
}

import Logging
import Synchronization

/// Records what a logger logs, to observe what a component did: every event at ``level`` or above, in order, with its
/// message and its metadata (the logger's and the event's own).
package final class LogRecorder: Sendable {
    /// One event logged.
    package struct Entry: Sendable {
        /// Its level.
        package var level: Logger.Level
        /// Its message.
        package var message: String
        /// The logger's metadata, overridden by the event's own.
        package var metadata: Logger.Metadata
    }

    /// The lowest level recorded.
    package let level: Logger.Level
    private let recorded = Mutex<[Entry]>([])

    /// A recorder of the events at `level` or above.
    package init(level: Logger.Level = .trace) { self.level = level }

    /// A logger whose events land here.
    package var logger: Logger {
        var logger = Logger(label: "kiosk.tests") { _ in Handler(recorder: self, logLevel: self.level) }
        logger.logLevel = level
        return logger
    }

    /// The events so far.
    package var entries: [Entry] { recorded.withLock { $0 } }

    /// The messages so far.
    package var messages: [String] { entries.map(\.message) }

    /// How many events had exactly this message.
    package func count(of message: String) -> Int { messages.filter { $0 == message }.count }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level

        init(recorder: LogRecorder, logLevel: Logger.Level) {
            self.recorder = recorder
            self.logLevel = logLevel
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let entry = Entry(
                level: event.level, message: event.message.description,
                metadata: metadata.merging(event.metadata ?? [:]) { _, new in new })
            recorder.recorded.withLock { $0.append(entry) }
        }
    }
}

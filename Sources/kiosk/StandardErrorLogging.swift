import ArgumentParser
import Logging

/// The logging of the server commands (`serve`, `bench`): lines on standard error from `--log-level` up.
enum StandardErrorLogging {
    /// The level `text` names.
    /// - Throws: a `ValidationError` for a word that is not a level.
    static func level(_ text: String) throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: text) else { throw ValidationError("Unknown --log-level '\(text)'.") }
        return level
    }

    /// Sends every logger's lines from `level` up to standard error. Once per process.
    static func bootstrap(level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}

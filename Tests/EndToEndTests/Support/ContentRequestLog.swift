import KioskServerTestSupport
import Logging

/// The server's content requests counted by URL path, read from its log as a ``LogRecorder`` keeps it (give
/// ``logger`` to ``TestServer/start(content:logger:configure:)``): the `content request` lines at `debug`, and the
/// `fault injected` lines of `fault=corrupt`, joined to their request by `request_id`. No proxy between client and
/// server.
///
/// With a ``Pack`` named, the `pack request` lines of that pack count too: each counts as a request of every file
/// whose bytes its range covers, and a corrupted byte of its body is put down to the file it fell in.
final class ContentRequestLog: Sendable {
    /// A product version's pack: its URL path and its files in grant order (URL path and length).
    struct Pack: Sendable {
        var path: String
        var files: [(urlPath: String, length: Int64)]

        /// The files (URL paths) holding bytes of the pack's `first...last`.
        func files(covering first: Int64, _ last: Int64) -> [String] {
            var start: Int64 = 0
            var covered: [String] = []
            for file in files {
                defer { start += file.length }
                if file.length > 0, start <= last, start + file.length - 1 >= first { covered.append(file.urlPath) }
            }
            return covered
        }
    }

    /// What the log says so far.
    private struct Tally {
        var counts: [String: Int] = [:]
        var total = 0
        /// Each request's path, and where its body starts in the pack for a pack request.
        var requests: [String: (path: String, packStart: Int64?)] = [:]
        var corrupted: [String] = []
    }

    private let recorder = LogRecorder(level: .debug)
    private let pack: Pack?

    /// A log of content requests, and of the requests of `pack` when given.
    init(pack: Pack? = nil) { self.pack = pack }

    /// A logger at `debug` that feeds this log.
    var logger: Logger { recorder.logger }

    /// Content requests so far, by URL path (`/v1/content/<product>/<version>/<file path>`), a pack request counting
    /// for each file it covers.
    var counts: [String: Int] { tally().counts }
    /// Content and pack requests so far.
    var total: Int { tally().total }
    /// The URL paths of the responses whose bytes were corrupted, once per corrupted response.
    var corruptedPaths: [String] { tally().corrupted }

    /// The server's log so far, read line by line.
    private func tally() -> Tally {
        var tally = Tally()
        for entry in recorder.entries { record(entry.message, metadata: entry.metadata, in: &tally) }
        return tally
    }

    private func record(_ message: String, metadata: Logger.Metadata, in tally: inout Tally) {
        guard case .string(let id)? = metadata["request_id"] else { return }
        switch message {
        case "content request":
            guard case .string(let path)? = metadata["path"] else { return }
            tally.counts[path, default: 0] += 1
            tally.total += 1
            tally.requests[id] = (path, nil)
        case "pack request":
            guard let pack, metadata["path"] == .string(pack.path), case .string(let range)? = metadata["range"],
                let (first, last) = Self.bounds(range)
            else { return }
            for file in pack.files(covering: first, last) { tally.counts[file, default: 0] += 1 }
            tally.total += 1
            tally.requests[id] = (pack.path, first)
        case "fault injected" where metadata["fault"] == .string("corrupt"):
            guard let request = tally.requests[id] else { return }
            guard let start = request.packStart, let pack else { return tally.corrupted.append(request.path) }
            guard case .string(let text)? = metadata["offset"], let offset = Int64(text) else { return }
            tally.corrupted += pack.files(covering: start + offset, start + offset)
        default:
            break
        }
    }

    /// `first` and `last` of a `bytes=first-last` range as KioskKit sends them.
    private static func bounds(_ range: String) -> (Int64, Int64)? {
        guard range.hasPrefix("bytes=") else { return nil }
        let parts = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int64(parts[0]), let last = Int64(parts[1]) else { return nil }
        return (first, last)
    }
}

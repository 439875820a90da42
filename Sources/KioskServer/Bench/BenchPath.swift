/// What a request to `kiosk bench` asks for, from its raw path: a file with no fault (`/<path>`), a file under a
/// scenario (`/s/<scenario>/<path>`), the list of scenarios (`/s/` or `/s`) or the report (`/s/report`).
///
/// Each segment is percent-decoded (``PathSegments``); a path is refused when a segment is `.` or `..`, starts with
/// `.` (hidden files are not served), or holds a control character, or when the path is longer than
/// ``maximumLength`` bytes or a segment than 255. Any other UTF-8 name is served as it is on disk. A folder named
/// `s` at the top of the served folder is reachable under a scenario, `/s/none/s/…`.
enum BenchPath: Equatable {
    /// A file with no fault, at this path inside the folder.
    case file(String)
    /// A file under the named scenario.
    case scenario(String, file: String)
    /// The list of scenarios.
    case scenarioList
    /// The verdict on every run (`/s/report`).
    case report

    /// The longest decoded file path served, in bytes.
    static let maximumLength = 4096
    /// The prefix of the paths under a scenario.
    static let scenarioPrefix = "s"
    /// The report's name under the prefix (no scenario may take it).
    static let reportName = "report"

    /// What `rawPath` (as the request carries it, without the query) asks for, or nil when it is not a valid path.
    init?(rawPath: String) {
        guard rawPath.hasPrefix("/"), rawPath.utf8.count <= Self.maximumLength * 3 else { return nil }
        if rawPath == "/s" || rawPath == "/s/" {
            self = .scenarioList
            return
        }
        guard let segments = PathSegments.decode(Substring(rawPath).utf8.dropFirst()),
            segments.allSatisfy(Self.isServable)
        else { return nil }
        if segments.first == Self.scenarioPrefix {
            if segments.count == 2, segments[1] == Self.reportName {
                self = .report
                return
            }
            guard segments.count >= 3 else { return nil }
            guard let file = Self.joined(segments[2...]) else { return nil }
            self = .scenario(segments[1], file: file)
        } else {
            guard let file = Self.joined(segments[...]) else { return nil }
            self = .file(file)
        }
    }

    private static func joined(_ segments: ArraySlice<String>) -> String? {
        let path = segments.joined(separator: "/")
        return path.utf8.count <= maximumLength ? path : nil
    }

    /// Whether a decoded segment names something that may be served.
    private static func isServable(_ segment: String) -> Bool {
        guard let first = segment.utf8.first, first != UInt8(ascii: "."), segment.utf8.count <= 255 else {
            return false
        }
        return !segment.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}

import Foundation

/// The scenarios a `kiosk bench` serves under `/s/<name>/`: the built-in set (``builtIn``) and those of a scenario
/// file (``init(file:)``), by name.
public struct BenchScenarios: Sendable {
    /// Every scenario, in the order they are listed: the built-in ones, then the file's.
    public let all: [BenchScenario]
    private let byName: [String: Int]

    /// The built-in scenarios and `extra`.
    /// - Throws: ``BenchScenarioFileError`` when a name is used twice.
    public init(adding extra: [BenchScenario] = []) throws(BenchScenarioFileError) {
        var byName: [String: Int] = [:]
        let all = Self.builtIn + extra
        for (index, scenario) in all.enumerated() {
            guard byName.updateValue(index, forKey: scenario.name) == nil else {
                throw BenchScenarioFileError(line: nil, "the scenario name '\(scenario.name)' is used twice")
            }
        }
        self.all = all
        self.byName = byName
    }

    /// The built-in scenarios alone.
    public static let builtInOnly = try! BenchScenarios()  // the built-in names are distinct (tested)

    /// The scenario named `name`.
    public subscript(name: String) -> BenchScenario? { byName[name].map { all[$0] } }

    /// The built-in scenarios: the faults of the field, most of them followed by requests that work, so that a
    /// client that resumes and checks what it gets ends with the file's exact bytes; for the redirects the right
    /// outcome is an error, and for a file that changed for good the new version's bytes or an error.
    public static let builtIn: [BenchScenario] = [
        make("none", "No fault: the file as it is (and how to reach a top-level folder named s).", []),
        make("cut", "The first answer is cut at 30 % of its body; the next ones work.", ["cut=30%"]),
        make(
            "cut-twice", "Cut at 30 %, the resumed answer cut again at half its body, then it works.",
            ["cut=30%", "cut=50%"]),
        make(
            "busy", "Two 503s with Retry-After: 1, then it works.",
            ["status=503;retry-after=1", "status=503;retry-after=1"]),
        make("server-error", "A 500, then it works.", ["status=500"]),
        make("stall", "The first answer pauses 3 s at half its body, then goes on.", ["stall=3s@50%"]),
        make("slow-start", "The first answer's head comes after 2 s.", ["first-byte=2s"]),
        make("slow", "Every answer is sent at 256 KiB/s.", ["throttle=256KiB/s"], after: .repeatLast),
        make(
            "ignore-range", "Cut at half the body; the resumed request gets 200 with the whole file.",
            ["cut=50%", "ignore-range"]),
        make(
            "validator-change",
            "Cut at half the body; the resumed answer has a new ETag and Last-Modified (same bytes), so If-Range "
                + "fails and the whole file comes with 200.",
            ["cut=50%", "etag-change"]),
        make(
            "corrupt",
            "One byte of the first answer is flipped (its Repr-Digest no longer matches); the next "
                + "answers are intact.", ["corrupt=50%"]),
        make(
            "flaky", "Three answers cut at random offsets (from the run's seed), then it works.",
            ["cut=random", "cut=random", "cut=random"]),
        make(
            "error-page", "The first answer is a 200 with a 4 KiB HTML error page (text/html) instead of the file.",
            ["error-page"]),
        make(
            "error-page-on-resume", "Cut at 30 %; the resumed request gets a 200 HTML error page instead of the rest.",
            ["cut=30%", "error-page"]),
        make(
            "node-drift",
            "Two CDN nodes with different strong ETags: cut at half on node 1, the resume (If-Range with node 1's "
                + "ETag) reaches node 2, which answers 200 with the whole file.",
            ["cut=50%;node=1", "node=2"]),
        make(
            "node-drift-weak", "As node-drift, with weak ETags (W/\"…\"), which If-Range never matches.",
            ["cut=50%;node=1/weak", "node=2/weak"]),
        make(
            "no-content-range", "Cut at half; the resumed request's 206 has no Content-Range.",
            ["cut=50%", "no-content-range"]),
        make(
            "range-off-by-one", "Cut at half; the resumed request's 206 has a Content-Range one byte off.",
            ["cut=50%", "range-off-by-one"]),
        make(
            "refused-range", "Cut at half; the resumed request gets 416 for a range the file holds.",
            ["cut=50%", "refuse-range"]),
        make("reset", "The first connection is reset before any header.", ["reset"]),
        make("trickle", "The first answer comes 4 KiB at a time, 20 ms apart.", ["trickle=4KiB/20ms"]),
        make(
            "length-short",
            "The first answer announces a Content-Length a tenth longer than its body, which ends early; the "
                + "connection closes.",
            ["length-lie=short"]),
        make(
            "length-long",
            "The first answer announces a Content-Length a tenth shorter than its body, sends the whole body, then "
                + "closes: a client that stops at the Content-Length has 90 % of the file.",
            ["length-lie=long"]),
        make(
            "expired-url",
            "Cut at half; the resume finds the URL expired (403, as an object store's presigned URL past its "
                + "expiry), and the same URL stays expired: only a renewed URL (another query string) works.",
            ["cut=50%", "expire"]),
        make(
            "redirect-origin",
            "Cut at half; the resume is redirected (307) to another origin, as to a CDN. A client must not follow a "
                + "redirect to another origin in the middle of a download: the right outcome is an error.",
            ["cut=50%", "redirect=origin"], outcome: .error),
        make(
            "redirect-loop", "Every answer redirects (307) to the same URL: the right outcome is an error.",
            ["redirect=loop"], after: .repeatLast, outcome: .error),
        make(
            "bytes-changed",
            "Cut at half; then the file has changed for good: every answer carries the new version (other bytes, "
                + "ETag, Last-Modified and Repr-Digest) and a resume's range of it, whatever its If-Range says. The "
                + "right outcome is the new version whole or an error, never a mix.",
            ["cut=50%", "changed"], after: .repeatLast, outcome: .changedOrError),
        make(
            "gzip-range",
            "Cut at half; the resumed 206 comes gzipped (Content-Encoding: gzip, which the client did not ask "
                + "for) with the Content-Range of the uncompressed range, as some CDNs send it; then it works.",
            ["cut=50%", "gzip-range"]),
    ]

    private static func make(
        _ name: String, _ description: String, _ steps: [String], after: BenchScenario.AfterSteps = .none,
        outcome: BenchScenario.Outcome = .bytes
    ) -> BenchScenario {
        // The built-in specs are constants: a typo is a programming error, caught by the tests.
        let specs = steps.map { try! FaultSpec(parsing: $0) }
        return BenchScenario(
            name: name, description: description, steps: specs.isEmpty ? [FaultSpec()] : specs, afterSteps: after,
            outcome: outcome)
    }
}

/// Why a scenario file was refused: the line it happened on, when known, and what is wrong.
public struct BenchScenarioFileError: Error, Equatable, CustomStringConvertible {
    /// The line of the file (from 1), when the problem is on one.
    public let line: Int?
    /// What is wrong, in a sentence.
    public let problem: String

    init(line: Int?, _ problem: String) {
        self.line = line
        self.problem = problem
    }

    public var description: String { line.map { "line \($0): \(problem)" } ?? problem }
}

extension BenchScenarios {
    /// The built-in scenarios and those of a scenario file's JSON:
    ///
    /// ```json
    /// {"scenarios": [{"name": "cut-then-busy", "description": "…",
    ///                 "steps": ["cut=30%", "status=503;retry-after=1", "none"],
    ///                 "then": "none", "outcome": "bytes"}]}
    /// ```
    ///
    /// `steps` are fault specs (docs/fault-injection.md; `none` for a request with no fault); `then` is `none`
    /// (the default: requests after the last step get no fault) or `repeat` (they get the last step again);
    /// `outcome` is `bytes` (the default: a correct client ends with the file's bytes), `error` (it ends with a
    /// clear error and no file) or `new-bytes-or-error` (for steps with `changed`: it ends with the changed version's
    /// exact bytes or with a clear error, never a mix). Any other key is refused.
    ///
    /// - Throws: ``BenchScenarioFileError`` naming the line and the problem.
    public init(file data: Data) throws(BenchScenarioFileError) {
        let text = String(decoding: data, as: UTF8.self)
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw BenchScenarioFileError(line: Self.line(inParserError: error, of: data), "the file is not valid JSON")
        }
        guard let object = root as? [String: Any], let list = object["scenarios"] as? [Any] else {
            throw BenchScenarioFileError(line: nil, #"the file must be an object with a "scenarios" list"#)
        }
        if let key = object.keys.first(where: { $0 != "scenarios" }) {
            throw BenchScenarioFileError(line: Self.line(of: key, in: text), "unknown key '\(key)'")
        }
        var scenarios: [BenchScenario] = []
        var names = Set(Self.builtIn.map(\.name))
        var searchFrom = text.startIndex
        for (index, entry) in list.enumerated() {
            let (scenario, line) = try Self.scenario(entry, number: index + 1, text: text, searchFrom: &searchFrom)
            guard names.insert(scenario.name).inserted else {
                let whose = Self.builtIn.contains { $0.name == scenario.name } ? "a built-in scenario's" : "used twice"
                throw BenchScenarioFileError(line: line, "the scenario name '\(scenario.name)' is \(whose)")
            }
            scenarios.append(scenario)
        }
        try self.init(adding: scenarios)
    }

    private static let keys: Set<String> = ["name", "description", "steps", "then", "outcome"]

    /// The `number`th scenario of the file and the line of its name; `searchFrom` moves past its name, so that the
    /// lines named are the entry's, not an earlier one's with the same text.
    private static func scenario(
        _ entry: Any, number: Int, text: String, searchFrom: inout String.Index
    ) throws(BenchScenarioFileError) -> (BenchScenario, line: Int?) {
        guard let fields = entry as? [String: Any] else {
            throw BenchScenarioFileError(line: nil, "scenario \(number) is not an object")
        }
        guard let name = fields["name"] as? String else {
            throw BenchScenarioFileError(line: nil, #"scenario \#(number) has no "name" string"#)
        }
        let nameLine = line(of: name, in: text, from: &searchFrom)
        func failure(_ problem: String, at literal: String? = nil) -> BenchScenarioFileError {
            var from = searchFrom
            let line = literal.flatMap { Self.line(of: $0, in: text, from: &from) } ?? nameLine
            return BenchScenarioFileError(line: line, "scenario '\(name)': \(problem)")
        }
        guard BenchScenario.isValidName(name) else {
            throw failure("the name must be letters, digits, '-', '_' or '.' (at most 64), not starting with '.'")
        }
        if let key = fields.keys.sorted().first(where: { !keys.contains($0) }) {
            throw failure("unknown key '\(key)'", at: key)
        }
        guard let stepTexts = fields["steps"] as? [String], !stepTexts.isEmpty else {
            throw failure(#""steps" must be a list of at least one fault spec"#)
        }
        var steps: [FaultSpec] = []
        for (index, stepText) in stepTexts.enumerated() {
            do {
                steps.append(try FaultSpec(parsing: stepText))
            } catch {
                throw failure("step \(index + 1): \(error)", at: stepText)
            }
        }
        let description = fields["description"] as? String ?? ""
        let after = try choice(fields["then"], key: "then", default: BenchScenario.AfterSteps.none, failure: failure)
        let outcome = try choice(
            fields["outcome"], key: "outcome", default: BenchScenario.Outcome.bytes, failure: failure)
        let scenario = BenchScenario(
            name: name, description: description, steps: steps, afterSteps: after, outcome: outcome)
        return (scenario, nameLine)
    }

    /// The value of a field that takes one of a few words (`then`, `outcome`): `fallback` when it is absent.
    private static func choice<Choice: RawRepresentable & CaseIterable>(
        _ value: Any?, key: String, default fallback: Choice,
        failure: (String, String?) -> BenchScenarioFileError
    ) throws(BenchScenarioFileError) -> Choice where Choice.RawValue == String {
        let words = Choice.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
        guard let value else { return fallback }
        guard let text = value as? String else { throw failure("\"\(key)\" must be \(words)", nil) }
        guard let chosen = Choice(rawValue: text) else {
            throw failure("\"\(key)\" must be \(words), not '\(text)'", text)
        }
        return chosen
    }

    /// The line (from 1) of the first JSON string `value` at or after `start`, which then moves past it.
    private static func line(of value: String, in text: String, from start: inout String.Index) -> Int? {
        // As written in the file, most often: a value with quotes or escapes in it is not found (the caller then
        // names the scenario's line).
        guard let found = text.range(of: "\"\(value)\"", range: start..<text.endIndex) else { return nil }
        start = found.upperBound
        return text[..<found.lowerBound].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
    }

    private static func line(of value: String, in text: String) -> Int? {
        var start = text.startIndex
        return line(of: value, in: text, from: &start)
    }

    /// The line of the place a JSON parser's error names, when it names one: "around line 3, column 7" (Darwin's
    /// Foundation) or "around character 23", a byte offset (Linux's).
    private static func line(inParserError error: any Error, of data: Data) -> Int? {
        let message = "\((error as NSError).userInfo[NSDebugDescriptionErrorKey] ?? "")"
        if let range = message.range(of: "line "), let line = Int(message[range.upperBound...].prefix { $0.isNumber }) {
            return line
        }
        guard let range = message.range(of: "character "),
            let offset = Int(message[range.upperBound...].prefix { $0.isNumber })
        else { return nil }
        return data.prefix(offset).reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
    }
}

import Crypto
import Foundation

/// The bench's verdict on how each client coped with each scenario (`GET /s/report`, `kiosk bench --report`): for
/// every run, scenario and file, the requests and what they got, the bytes sent against the file's size, the
/// restarts from zero, whether an error page was kept as the file, and whether the client ended with the right
/// outcome (the file's exact bytes, a clear error for a scenario whose right outcome is an error, or either the
/// changed version's exact bytes or a clear error for a scenario where the file changed for good).
public struct BenchReport: Sendable, Encodable {
    /// Whether a run ended as its scenario says a correct client ends.
    public enum Verdict: String, Sendable, Encodable {
        case pass
        case fail
        /// The client has not said what it ended with (`PUT /s/<scenario>/<path>`).
        case unknown
    }

    /// One run of one scenario on one file.
    public struct Entry: Sendable, Encodable {
        public var run: String
        public var scenario: String
        public var file: String
        /// What a correct client ends with: `bytes`, `error` or `new-bytes-or-error`.
        public var expected: String
        /// The file's size and SHA-256 now (nil when it is gone).
        public var fileSize: Int64?
        public var fileSHA256: String?
        /// The SHA-256 of the version the file changed to (``ChangedVersion``), for a scenario whose right outcome
        /// is `new-bytes-or-error` (nil otherwise, and when the file is gone).
        public var changedSHA256: String?
        var requests: [BenchRequestRecord]
        /// The file's bytes sent over all requests (200 and 206 answers, not error pages), and that over the
        /// file's size (1.0: each byte sent once).
        public var bytesSent: Int64
        public var bytesSentOverFileSize: Double?
        /// Requests after the first that asked for the file from its start although some of its bytes had come.
        public var restartsFromZero: Int
        /// Whether the client kept a file after an error page came instead of the bytes, and that file is wrong.
        public var errorPageAccepted: Bool
        /// What the client says it ended with.
        public var savedSHA256: String?
        public var clientError: String?
        public var verdict: Verdict
        /// Why, in a sentence or two.
        public var reasons: [String]

        enum CodingKeys: String, CodingKey {
            case run, scenario, file, expected, requests, verdict, reasons
            case fileSize = "file_size"
            case fileSHA256 = "file_sha256"
            case changedSHA256 = "changed_sha256"
            case bytesSent = "bytes_sent"
            case bytesSentOverFileSize = "bytes_sent_over_file_size"
            case restartsFromZero = "restarts_from_zero"
            case errorPageAccepted = "error_page_accepted"
            case savedSHA256 = "saved_sha256"
            case clientError = "client_error"
        }
    }

    /// Every run, ordered by run, scenario and file.
    public var runs: [Entry]
    public var passed: Int { runs.filter { $0.verdict == .pass }.count }
    public var failed: Int { runs.filter { $0.verdict == .fail }.count }
    public var unknown: Int { runs.filter { $0.verdict == .unknown }.count }
    /// Whether there was at least one run and every run passed: the exit status of `kiosk bench --report`.
    public var isPass: Bool { !runs.isEmpty && runs.allSatisfy { $0.verdict == .pass } }

    enum CodingKeys: String, CodingKey {
        case runs, passed, failed, unknown
        case isPass = "pass"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(runs, forKey: .runs)
        try container.encode(passed, forKey: .passed)
        try container.encode(failed, forKey: .failed)
        try container.encode(unknown, forKey: .unknown)
        try container.encode(isPass, forKey: .isPass)
    }

    /// The verdict on one sequence, given the file as it is now (size and SHA-256, nil when it is gone), what the
    /// scenario says a correct client ends with and, for `new-bytes-or-error`, the SHA-256 of the changed version.
    static func entry(
        _ key: BenchSequence.Key, _ sequence: BenchSequence, expected: BenchScenario.Outcome,
        file: (size: Int64, sha256: String)?, changedSHA256: String? = nil
    ) -> Entry {
        let records = sequence.records
        // The file's bytes: those of 200 and 206 answers (not of error pages, nor of error envelopes).
        let fileBytes = records.filter { [200, 206].contains($0.status) && !$0.errorPage }
        let bytesSent = fileBytes.reduce(0) { $0 + $1.bytesSent }
        var restarts = 0
        var received: Int64 = 0
        for record in records where record.method == "GET" {
            if received > 0, Self.startsAtZero(record.range) { restarts += 1 }
            if [200, 206].contains(record.status) && !record.errorPage { received += record.bytesSent }
        }
        var savedSHA256: String?
        var clientError: String?
        var reasons: [String] = []
        let verdict: Verdict
        switch (sequence.clientOutcome, expected) {
        case (nil, _):
            verdict = .unknown
            reasons.append("The client has not said what it ended with (PUT /s/<scenario>/<path>).")
        case (.saved(let sha256), .bytes):
            savedSHA256 = sha256
            if let file, sha256 == file.sha256 {
                verdict = .pass
            } else {
                verdict = .fail
                reasons.append("The client saved bytes that are not the file's (SHA-256 \(sha256)).")
            }
        case (.failed(let message), .bytes):
            clientError = message
            verdict = .fail
            reasons.append("The client gave up although a correct client gets the file's bytes.")
        case (.failed(let message), .error):
            clientError = message
            verdict = .pass
        case (.saved(let sha256), .error):
            savedSHA256 = sha256
            verdict = .fail
            reasons.append("The client kept a file although a correct client ends with an error and no file.")
        case (.failed(let message), .changedOrError):
            clientError = message
            verdict = .pass
        case (.saved(let sha256), .changedOrError):
            savedSHA256 = sha256
            if let changedSHA256, sha256 == changedSHA256 {
                verdict = .pass
            } else {
                verdict = .fail
                reasons.append(Self.notTheChangedVersion(sha256, file: file, changedSHA256: changedSHA256))
            }
        }
        let errorPageAccepted =
            verdict == .fail && savedSHA256 != nil && records.contains { $0.errorPage }
        if errorPageAccepted { reasons.append("An error page came with status 200 and the client kept what it got.") }
        return Entry(
            run: key.run, scenario: key.scenario, file: key.file, expected: expected.rawValue,
            fileSize: file?.size, fileSHA256: file?.sha256,
            changedSHA256: expected == .changedOrError ? changedSHA256 : nil, requests: records, bytesSent: bytesSent,
            bytesSentOverFileSize: file.flatMap { $0.size > 0 ? Double(bytesSent) / Double($0.size) : nil },
            restartsFromZero: restarts, errorPageAccepted: errorPageAccepted, savedSHA256: savedSHA256,
            clientError: clientError, verdict: verdict, reasons: reasons)
    }

    /// Why bytes saved under a file that changed for good (SHA-256 `sha256`) are not the right outcome.
    private static func notTheChangedVersion(
        _ sha256: String, file: (size: Int64, sha256: String)?, changedSHA256: String?
    ) -> String {
        guard let changedSHA256 else {
            return "The file is gone, so the version it changed to is not known (the client saved SHA-256 \(sha256))."
        }
        if sha256 == file?.sha256 {
            return "The client saved the version from before the change (SHA-256 \(sha256)), which no answer after "
                + "the change carried, not the new one (SHA-256 \(changedSHA256))."
        }
        return "The client saved bytes (SHA-256 \(sha256)) that are neither the new version's (SHA-256 "
            + "\(changedSHA256)) nor the old one's: most likely the start of the old version with the rest of the new "
            + "one. A correct client notices the change (the ETag, Last-Modified or Repr-Digest differs) and fetches "
            + "the new version whole, or ends with an error."
    }

    /// Whether a request with this `Range` asks for the file from its first byte (no range, or one from 0).
    private static func startsAtZero(_ range: String?) -> Bool {
        guard let range else { return true }
        let spec = range.drop { $0 != "=" }.dropFirst().trimmingCharacters(in: .whitespaces)
        return spec.hasPrefix("0-")
    }

    /// The report as a table for a terminal: one line per run, then the totals.
    public var table: String {
        let header = "verdict  scenario              run                   file                  requests  sent/size"
        var lines = [header + "  restarts  error page kept"]
        for entry in runs {
            let ratio = entry.bytesSentOverFileSize.map { String(format: "%.2f", $0) } ?? "-"
            lines.append(
                [
                    entry.verdict.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0),
                    Self.cell(entry.scenario, 21), Self.cell(entry.run, 21), Self.cell(entry.file, 21),
                    String(entry.requests.count).padding(toLength: 9, withPad: " ", startingAt: 0),
                    ratio.padding(toLength: 10, withPad: " ", startingAt: 0),
                    String(entry.restartsFromZero).padding(toLength: 9, withPad: " ", startingAt: 0),
                    entry.errorPageAccepted ? "yes" : "no",
                ].joined(separator: " "))
            for reason in entry.reasons { lines.append("         " + reason) }
        }
        lines.append("\(passed) passed, \(failed) failed, \(unknown) unknown: \(isPass ? "PASS" : "FAIL")")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func cell(_ text: String, _ width: Int) -> String {
        let shown = text.count > width ? String(text.prefix(width - 1)) + "…" : text
        return shown.padding(toLength: width, withPad: " ", startingAt: 0)
    }
}

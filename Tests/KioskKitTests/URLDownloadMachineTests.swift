import Foundation
import KioskCore
import Testing

@testable import KioskKit

/// ``URLDownloadMachine``: each answer a plain-URL download can get, and what it does next (no I/O).
@Suite("URLDownload: the download machine")
struct URLDownloadMachineTests {
    static let url = URL(string: "http://127.0.0.1:8081/files/level.pak?sig=1")!
    static let sha = String(repeating: "ab", count: 32)
    static let digest = RepresentationDigest.fieldValue(sha256: sha)!
    static let tag = "\"v1\""

    /// A machine with `onDisk` bytes of a 1,000-byte file tagged `"v1"` (nothing when 0).
    static func machine(onDisk: Int64 = 0, expected: String? = nil, attempts: Int = 4) -> URLDownloadMachine {
        let head = AnswerHead(
            status: 200,
            fields: [
                "ETag": tag, "Last-Modified": "Sun, 29 Nov 2026 05:00:00 GMT",
                "Repr-Digest": digest,
            ])
        return URLDownloadMachine(
            url: url, expectedSHA256: expected, maximumAttempts: attempts,
            representation: onDisk > 0 ? URLRepresentation(head, length: 1000) : nil, bytesOnDisk: onDisk)
    }

    static func head(_ status: Int, _ fields: [String: String] = [:]) -> AnswerHead {
        AnswerHead(status: status, fields: fields)
    }

    static func whole(_ extra: [String: String] = [:]) -> AnswerHead {
        head(200, ["Content-Length": "1000", "ETag": tag, "Repr-Digest": digest].merging(extra) { $1 })
    }

    static func part(from first: Int64, _ extra: [String: String] = [:]) -> AnswerHead {
        head(
            206,
            [
                "Content-Range": "bytes \(first)-999/1000", "Content-Length": "\(1000 - first)", "ETag": tag,
                "Repr-Digest": digest,
            ].merging(extra) { $1 })
    }

    @Test func aFreshDownloadAsksForTheWholeFileWithoutCoding() {
        var machine = Self.machine()
        guard case .send(let url, let headers) = machine.start() else {
            Issue.record("no request")
            return
        }
        #expect(url == Self.url)
        #expect(headers["Range"] == nil && headers["If-Range"] == nil)
        #expect(headers["Accept-Encoding"] == "identity")
        #expect(machine.received(Self.whole()) == .takeBody(offset: 0, representation: machine.representation!))
        #expect(machine.representation?.length == 1000 && machine.representation?.sha256 == Self.sha)
        #expect(machine.bodyEnded(bytesOnDisk: 1000, error: nil) == .verify)
        #expect(machine.verified(sha256: Self.sha) == .finish(.representationDigest))
    }

    @Test func aResumeAsksFromTheBytesOnDiskWithAStrongTagOrElseTheDate() {
        var machine = Self.machine(onDisk: 400)
        guard case .send(_, let headers) = machine.start() else {
            Issue.record("no request")
            return
        }
        #expect(headers["Range"] == "bytes=400-" && headers["If-Range"] == Self.tag)
        #expect(
            machine.received(Self.part(from: 400)) == .takeBody(offset: 400, representation: machine.representation!))

        let weak = URLRepresentation(
            Self.head(200, ["ETag": "W/\"v1\"", "Last-Modified": "Sun, 29 Nov 2026 05:00:00 GMT"]), length: 1000)
        #expect(weak.ifRange == "Sun, 29 Nov 2026 05:00:00 GMT")
    }

    @Test func everyByteOnDiskGoesStraightToTheCheck() {
        var machine = Self.machine(onDisk: 1000)
        #expect(machine.start() == .verify)
        #expect(machine.verified(sha256: Self.sha) == .finish(.representationDigest))
    }

    @Test func aWholeFileForARangeStartsOver() {
        var machine = Self.machine(onDisk: 400)
        _ = machine.start()
        let action = machine.received(Self.whole(["ETag": "\"v2\""]))
        #expect(action == .takeBody(offset: 0, representation: machine.representation!))
        #expect(machine.representation?.entityTag == "\"v2\"" && machine.bytesOnDisk == 0 && machine.restarts == 1)
    }

    @Test(arguments: [
        ["ETag": "\"v2\""],
        ["Repr-Digest": RepresentationDigest.fieldValue(sha256: String(repeating: "cd", count: 32))!],
        ["Content-Range": "bytes 400-1099/1100", "Content-Length": "700"],
    ])
    func aRangeOfAnotherVersionIsNeverStitched(changed: [String: String]) {
        var machine = Self.machine(onDisk: 400)
        _ = machine.start()
        #expect(machine.received(Self.part(from: 400, changed)) == .restart)
        #expect(machine.bytesOnDisk == 0 && machine.representation == nil && machine.restarts == 1)
        guard case .send(_, let headers) = machine.restarted() else {
            Issue.record("no request")
            return
        }
        #expect(headers["Range"] == nil)
    }

    @Test(arguments: [
        ["Content-Range": "bytes 401-999/1000", "Content-Length": "599"], ["Content-Range": ""],
        ["Content-Length": "10"], ["Content-Encoding": "gzip"],
        ["Content-Type": "text/html; charset=utf-8", "Repr-Digest": ""],
    ])
    func anAnswerThatIsNotTheRangeAskedIsRefusedAndRetried(wrong: [String: String]) {
        var machine = Self.machine(onDisk: 400)
        _ = machine.start()
        var head = Self.part(from: 400, wrong)
        head.fields = head.fields.filter { !$0.value.isEmpty }
        #expect(machine.received(head) == .wait(attempt: 1, retryAfter: nil))
        #expect(machine.bytesOnDisk == 400)
    }

    @Test func anHTMLPageIsAnErrorPageUnlessTheFileIsHTMLOrHasADigest() {
        var machine = Self.machine()
        _ = machine.start()
        #expect(machine.received(Self.head(200, ["Content-Type": "text/html"])) == .wait(attempt: 1, retryAfter: nil))
        _ = machine.waited()
        #expect(
            machine.received(Self.head(200, ["Content-Type": "text/html", "Repr-Digest": Self.digest]))
                == .takeBody(offset: 0, representation: machine.representation!))

        var page = URLDownloadMachine(
            url: URL(string: "https://example.com/issue/index.html")!, expectedSHA256: nil, maximumAttempts: 3,
            representation: nil, bytesOnDisk: 0)
        _ = page.start()
        #expect(page.received(Self.head(200, ["Content-Type": "text/html"])) != .wait(attempt: 1, retryAfter: nil))
    }

    @Test func redirectsAreFollowedOnTheOriginOnlyAndNotForever() {
        var machine = Self.machine(onDisk: 400)
        _ = machine.start()
        guard
            case .send(let moved, let headers) = machine.received(Self.head(307, ["Location": "/elsewhere/level.pak"]))
        else {
            Issue.record("the redirect was not followed")
            return
        }
        #expect(moved.absoluteString == "http://127.0.0.1:8081/elsewhere/level.pak")
        #expect(headers["Range"] == "bytes=400-")
        #expect(
            machine.received(Self.head(302, ["Location": "http://localhost:8081/files/level.pak"]))
                == .fail(
                    .redirectRefused(from: "http://127.0.0.1:8081", to: "http://localhost:8081"), keepsPartial: true))

        var loop = Self.machine()
        _ = loop.start()
        var action = URLDownloadMachine.Action.verify
        for _ in 0...URLDownloadMachine.maximumRedirects {
            action = loop.received(Self.head(307, ["Location": Self.url.absoluteString]))
        }
        #expect(action == .fail(.tooManyRedirects(url: Self.url.absoluteString, limit: 10), keepsPartial: true))
    }

    @Test func aRefusedRangeIsTheWholeFileOnlyWhenEveryByteIsThere() {
        var complete = Self.machine(onDisk: 1000)
        complete = URLDownloadMachine(
            url: Self.url, expectedSHA256: nil, maximumAttempts: 4,
            representation: URLRepresentation(Self.whole(), length: nil), bytesOnDisk: 1000)
        _ = complete.start()
        #expect(complete.received(Self.head(416, ["Content-Range": "bytes */1000"])) == .verify)

        var machine = Self.machine(onDisk: 400)
        _ = machine.start()
        #expect(machine.received(Self.head(416, ["Content-Range": "bytes */1000"])) == .restart)
        #expect(machine.bytesOnDisk == 0)
    }

    @Test func aCutWithNewBytesGoesOnAtOnceAndOneWithoutWaits() {
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.received(Self.whole())
        let cut = KioskError.network(code: URLError.networkConnectionLost.rawValue, underlying: "cut")
        guard case .send(_, let headers) = machine.bodyEnded(bytesOnDisk: 300, error: cut) else {
            Issue.record("no request at once")
            return
        }
        #expect(headers["Range"] == "bytes=300-")
        _ = machine.received(Self.part(from: 300))
        #expect(machine.bodyEnded(bytesOnDisk: 300, error: cut) == .wait(attempt: 1, retryAfter: nil))
        _ = machine.waited()
        _ = machine.received(Self.part(from: 300))
        // A body that ends without an error before the file's end is a cut as well.
        guard case .send = machine.bodyEnded(bytesOnDisk: 700, error: nil) else {
            Issue.record("no request at once")
            return
        }
    }

    @Test func failuresInARowEndTheDownloadWithItsBytesKept() {
        var machine = Self.machine(onDisk: 400, attempts: 3)
        _ = machine.start()
        let busy = Self.head(503, ["Retry-After": "1"])
        #expect(machine.received(busy) == .wait(attempt: 1, retryAfter: 1))
        _ = machine.waited()
        #expect(machine.received(busy) == .wait(attempt: 2, retryAfter: 1))
        _ = machine.waited()
        guard case .fail(.server(503, _, _, _), keepsPartial: true) = machine.received(busy) else {
            Issue.record("the third 503 did not end the download")
            return
        }
    }

    @Test func aRefusedURLEndsTheDownloadWithItsBytesKept() {
        var machine = Self.machine(onDisk: 400)
        _ = machine.start()
        guard case .fail(.server(403, "http_403", _, _), keepsPartial: true) = machine.received(Self.head(403)) else {
            Issue.record("a 403 did not end the download")
            return
        }
    }

    @Test func bytesThatDoNotMatchTheirDigestAreFetchedAgainAndThenRefused() {
        var machine = Self.machine(onDisk: 1000, attempts: 2)
        #expect(machine.start() == .verify)
        let wrong = String(repeating: "00", count: 32)
        #expect(machine.verified(sha256: wrong) == .restart)
        _ = machine.restarted()
        _ = machine.received(Self.whole())
        _ = machine.bodyEnded(bytesOnDisk: 1000, error: nil)
        #expect(
            machine.verified(sha256: wrong)
                == .fail(
                    .contentMismatch(url: Self.url.absoluteString, expectedSHA256: Self.sha, actualSHA256: wrong),
                    keepsPartial: false))
    }

    @Test func theCallersSHA256WinsAndAServerThatVouchesForAnotherFileIsRefusedAtOnce() {
        let mine = String(repeating: "11", count: 32)
        var machine = Self.machine(onDisk: 1000, expected: mine)
        _ = machine.start()
        #expect(
            machine.verified(sha256: Self.sha)
                == .fail(
                    .contentMismatch(url: Self.url.absoluteString, expectedSHA256: mine, actualSHA256: Self.sha),
                    keepsPartial: false))
        var right = Self.machine(onDisk: 1000, expected: mine)
        _ = right.start()
        #expect(right.verified(sha256: mine) == .finish(.expectedSHA256))
    }

    @Test func aFileWithoutDigestOrLengthIsCheckedByItsEndOnly() {
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.received(Self.head(200, ["Transfer-Encoding": "chunked"]))
        #expect(machine.bodyEnded(bytesOnDisk: 1234, error: nil) == .verify)
        #expect(machine.representation?.length == 1234)
        #expect(machine.verified(sha256: Self.sha) == .finish(.none))
    }

    @Test func theResumeKeyIsTheURLWithoutItsQuery() {
        let renewed = URL(string: "http://127.0.0.1:8081/files/level.pak?sig=2#x")!
        #expect(URLResumeRecord.location(of: renewed) == URLResumeRecord.location(of: Self.url))
        #expect(URLResumeRecord.location(of: renewed) == "http://127.0.0.1:8081/files/level.pak")
    }

    @Test func aReprDigestIsReadAsRFC9530WritesIt() {
        #expect(RepresentationDigest.sha256(in: Self.digest) == Self.sha)
        #expect(RepresentationDigest.sha256(in: "sha-512=:AAAA:, " + Self.digest + ";x=1") == Self.sha)
        #expect(RepresentationDigest.sha256(in: "sha-256=:AAAA:") == nil)
        #expect(RepresentationDigest.sha256(in: "sha-512=:AAAA:") == nil)
        #expect(RepresentationDigest.sha256(in: nil) == nil)
    }
}

import CompressNIO
import Crypto
import Foundation
import KioskCore
import KioskServer
import NIOCore
import Testing

/// Every fault of `kiosk serve --faults`, asked for per request over the wire, as a curl user would.
@Suite("Server: fault injection")
struct FaultInjectionTests {
    /// A server with per-request faults allowed, a purchased book, and its one file.
    private struct Fixture {
        let server: TestServer
        let url: String
        let auth: (String, String)
        let sha256: String
        let clean: Data

        func get(_ headers: [(String, String)] = [], query: String = "") async throws -> RawHTTPResponse {
            try await server.send("GET", url + query, headers: [auth] + headers)
        }

        func faulty(_ spec: String, _ headers: [(String, String)] = []) async throws -> RawHTTPResponse {
            try await get([("Kiosk-Fault", spec)] + headers)
        }

        /// `kiosk_faults_injected_total{kind="<kind>"}` as served on /metrics.
        func injected(_ kind: String) async throws -> Int {
            let text = try await server.send("GET", "/metrics").text
            let prefix = "kiosk_faults_injected_total{kind=\"\(kind)\"} "
            return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap {
                Int($0.dropFirst(prefix.count))
            }
                ?? 0
        }
    }

    private func withFixture(
        faults: FaultProfile = .requestOnly, _ body: (Fixture) async throws -> Void
    ) async throws {
        try await TestServer.with(configure: {
            $0.faults = faults
            $0.faultsSeed = 11
        }) { server in
            let purchase = try await server.buy(TestServer.Sample.book)
            let grant = try await server.grant(TestServer.Sample.book, receipt: purchase.receiptData)
            let file = try #require(grant.files.first)
            let auth = ("Authorization", "Bearer \(grant.token)")
            let clean = try await server.send("GET", file.url, headers: [auth, ("Kiosk-Fault", "none")])
            #expect(clean.status == 200)
            try await body(Fixture(server: server, url: file.url, auth: auth, sha256: file.sha256, clean: clean.body))
        }
    }

    private func elapsed(_ work: () async throws -> Void) async rethrows -> Duration {
        let start = ContinuousClock.now
        try await work()
        return ContinuousClock.now - start
    }

    @Test func cutClosesTheConnectionAfterThatManyBytes() async throws {
        try await withFixture { fixture in
            let cut = try await fixture.faulty("cut=65536")
            #expect(cut.status == 200)
            #expect(cut.header("Content-Length") == String(fixture.clean.count))
            #expect(cut.body == fixture.clean.prefix(65536))

            let ranged = try await fixture.faulty("cut=10", [("Range", "bytes=100-")])
            #expect(ranged.status == 206)
            #expect(ranged.body == fixture.clean[100..<110])

            let random = try await fixture.faulty("cut=random")
            #expect(random.body.count < fixture.clean.count)
            #expect(random.body == fixture.clean.prefix(random.body.count))
            #expect(try await fixture.injected("cut") == 3)
        }
    }

    @Test func theQueryParameterWorksLikeTheHeader() async throws {
        try await withFixture { fixture in
            let plain = try await fixture.get(query: "?fault=cut=1000")
            #expect(plain.body.count == 1000)
            let encoded = try await fixture.get(query: "?fault=cut%3D2000%3Bcorrupt%3D0")
            #expect(encoded.body.count == 2000)
            #expect(encoded.body.first != fixture.clean.first)
        }
    }

    @Test func throttleIsObservablySlower() async throws {
        try await withFixture { fixture in
            let range = ("Range", "bytes=0-204799")
            var response: RawHTTPResponse?
            let slow = try await elapsed { response = try await fixture.faulty("throttle=400KiB/s", [range]) }
            #expect(response?.body == fixture.clean.prefix(204_800))
            // A lower bound only: the pace guarantees it whatever the machine's load (an unthrottled request
            // compared against it measured the load, and failed when the machine was busy).
            #expect(slow >= .milliseconds(450), "200 KiB at 400 KiB/s took \(slow)")
            #expect(try await fixture.injected("throttle") == 1)
        }
    }

    @Test func stallPausesAtTheOffsetAndFirstBytePausesBeforeTheHead() async throws {
        try await withFixture { fixture in
            var response: RawHTTPResponse?
            let stalled = try await elapsed { response = try await fixture.faulty("stall=600ms@1000") }
            #expect(stalled >= .milliseconds(550))
            #expect(response?.body == fixture.clean)
            let late = try await elapsed { response = try await fixture.faulty("first-byte=500ms") }
            #expect(late >= .milliseconds(450))
            #expect(response?.body == fixture.clean)
            #expect(try await fixture.injected("stall") == 1)
            #expect(try await fixture.injected("first_byte") == 1)
        }
    }

    @Test func statusAnswersInsteadOfTheContent() async throws {
        try await withFixture { fixture in
            let unavailable = try await fixture.faulty("status=503,retry-after=2")
            #expect(unavailable.status == 503)
            #expect(unavailable.header("Retry-After") == "2")
            let envelope = try KioskJSON.decode(APIErrorEnvelope.self, from: unavailable.body)
            #expect(envelope.error.code == "fault_injected")
            let busy = try await fixture.faulty("status=429")
            #expect(busy.status == 429)
            #expect(busy.header("Retry-After") == "1")
            let broken = try await fixture.faulty("status=500")
            #expect(broken.status == 500)
            #expect(broken.header("Retry-After") == nil)
            #expect(try await fixture.injected("status") == 3)
        }
    }

    @Test func ignoreRangeAnswersTheWholeFile() async throws {
        try await withFixture { fixture in
            let response = try await fixture.faulty("ignore-range", [("Range", "bytes=0-9")])
            #expect(response.status == 200)
            #expect(response.header("Content-Range") == nil)
            #expect(response.body == fixture.clean)
            #expect(try await fixture.injected("ignore_range") == 1)
        }
    }

    @Test func etagChangeActsAsIfTheFileChanged() async throws {
        try await withFixture { fixture in
            let realTag = "\"\(fixture.sha256)\""
            let resumed = try await fixture.faulty("etag-change", [("Range", "bytes=10-"), ("If-Range", realTag)])
            #expect(resumed.status == 200)
            #expect(resumed.body == fixture.clean)
            let changedTag = try #require(resumed.header("ETag"))
            #expect(changedTag != realTag)
            #expect(EntityTag(parsing: changedTag)?.isWeak == false)
            // The next request, without the fault, finds the real tag again: the changed one no longer holds.
            let next = try await fixture.get([("Range", "bytes=10-"), ("If-Range", changedTag)])
            #expect(next.status == 200)
            #expect(next.header("ETag") == realTag)
            let again = try await fixture.faulty("etag-change")
            #expect(again.header("ETag") != changedTag)
            #expect(try await fixture.injected("etag_change") == 2)
        }
    }

    @Test func preconditionsCompareTheChangedValidators() async throws {
        try await withFixture { fixture in
            let realTag = "\"\(fixture.sha256)\""
            // With etag-change the file looks changed: the real tag no longer matches, either way.
            let revalidated = try await fixture.faulty("etag-change", [("If-None-Match", realTag)])
            #expect(revalidated.status == 200)
            #expect(revalidated.body == fixture.clean)
            let guarded = try await fixture.faulty("etag-change", [("If-Match", realTag), ("Range", "bytes=0-9")])
            #expect(guarded.status == 412)
            // A 304 repeats the changed validators, not the file's.
            let later = HTTPDate.format(Date().addingTimeInterval(3600))
            let current = try await fixture.server.send(
                "HEAD", fixture.url,
                headers: [
                    fixture.auth, ("Kiosk-Fault", "etag-change"), ("If-Match", "*"), ("If-Modified-Since", later),
                ])
            #expect(current.status == 304)
            let changedTag = try #require(current.header("ETag"))
            #expect(changedTag != realTag)
            #expect(EntityTag(parsing: changedTag)?.isWeak == false)
            #expect(try await fixture.injected("etag_change") == 3)
        }
    }

    /// `changed` on a content file: another version's bytes (XOR 0x5A), strong `ETag` and `Repr-Digest` (its
    /// SHA-256), a range of it whatever `If-Range` says, and `If-Match` evaluated against its `ETag`.
    @Test func changedAnswersAnotherVersionOfTheFile() async throws {
        try await withFixture { fixture in
            let changed = Data(fixture.clean.map { $0 ^ 0x5A })
            let digest = Data(SHA256.hash(data: changed))
            let realTag = "\"\(fixture.sha256)\""
            let resumed = try await fixture.faulty("changed", [("Range", "bytes=10-"), ("If-Range", realTag)])
            #expect(resumed.status == 206 && resumed.body == changed[10...])
            #expect(resumed.header("Content-Range") == "bytes 10-\(changed.count - 1)/\(changed.count)")
            let tag = "\"\(digest.map { String(format: "%02x", $0) }.joined())\""
            #expect(resumed.header("ETag") == tag)
            #expect(resumed.header("Repr-Digest") == "sha-256=:\(digest.base64EncodedString()):")
            #expect(try await fixture.faulty("changed").body == changed)
            #expect(try await fixture.faulty("changed", [("If-Match", realTag)]).status == 412)
            #expect(try await fixture.faulty("changed", [("If-None-Match", tag)]).status == 304)
            #expect(try await fixture.get().body == fixture.clean)
            #expect(try await fixture.injected("changed") == 4)
        }
    }

    /// `gzip-range` on a content file: a range gzipped with its uncompressed `Content-Range`, chunked.
    @Test func gzipRangeSendsARangeGzipped() async throws {
        try await withFixture { fixture in
            let ranged = try await fixture.faulty("gzip-range", [("Range", "bytes=100-")])
            #expect(ranged.status == 206 && ranged.header("Content-Encoding") == "gzip")
            #expect(ranged.header("Content-Range") == "bytes 100-\(fixture.clean.count - 1)/\(fixture.clean.count)")
            #expect(ranged.header("Content-Length") == nil)
            var body = ByteBuffer(bytes: ranged.body)
            #expect(Data(try body.decompress(with: .gzip()).readableBytesView) == fixture.clean[100...])
            #expect(try await fixture.injected("gzip_range") == 1)
        }
    }

    @Test func corruptFlipsExactlyOneByte() async throws {
        try await withFixture { fixture in
            let response = try await fixture.faulty("corrupt=100")
            #expect(response.body.count == fixture.clean.count)
            let differing = zip(response.body, fixture.clean).enumerated().filter { $0.element.0 != $0.element.1 }
            #expect(differing.map(\.offset) == [100])

            let ranged = try await fixture.faulty("corrupt=5", [("Range", "bytes=1000-1999")])
            let expected = fixture.clean[1000..<2000]
            let rangedDiffs = zip(ranged.body, expected).enumerated().filter { $0.element.0 != $0.element.1 }
            #expect(rangedDiffs.map(\.offset) == [5])
            #expect(try await fixture.injected("corrupt") == 2)
        }
    }

    @Test func aBadSpecIsABadRequest() async throws {
        try await withFixture { fixture in
            let response = try await fixture.faulty("cutt=1")
            #expect(response.status == 400)
            let envelope = try KioskJSON.decode(APIErrorEnvelope.self, from: response.body)
            #expect(envelope.error.code == "bad_request")
            #expect(envelope.error.message.contains("unknown fault 'cutt'"))
            let query = try await fixture.get(query: "?fault=throttle=fast")
            #expect(query.status == 400)
        }
    }

    @Test func aServerWideSpecAppliesAndAPerRequestSpecReplacesIt() async throws {
        try await withFixture(faults: .spec(try FaultSpec(parsing: "status=503"))) { fixture in
            #expect(try await fixture.get().status == 503)
            let replaced = try await fixture.faulty("corrupt=0")
            #expect(replaced.status == 200)
            #expect(replaced.body.first != fixture.clean.first)
            // Only content is faulty.
            #expect(try await fixture.server.send("GET", "/healthz").status == 200)
        }
    }

    @Test func seededChaosInjectsOneFaultPerRequest() async throws {
        try await withFixture(faults: .chaos(probability: 1)) { fixture in
            for _ in 0..<12 {
                let response = try await fixture.get([("Range", "bytes=0-99999")])
                #expect([200, 206, 429, 500, 503].contains(response.status))
            }
            var total = 0
            for kind in FaultKind.allCases { total += try await fixture.injected(kind.rawValue) }
            #expect(total == 12)
        }
    }

    @Test func withoutFaultsEnabledTheHeaderIsIgnored() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(TestServer.Sample.book)
            let grant = try await server.grant(TestServer.Sample.book, receipt: purchase.receiptData)
            let file = try #require(grant.files.first)
            let response = try await server.send(
                "GET", file.url + "?fault=status=503",
                headers: [("Authorization", "Bearer \(grant.token)"), ("Kiosk-Fault", "status=503")])
            #expect(response.status == 200)
            #expect(response.body.count == file.length)
            #expect(!(try await server.send("GET", "/metrics").text.contains("kiosk_faults_injected_total")))
        }
    }

    @Test func faultsAreRefusedWithTheAppStore() async throws {
        var configuration = ServerConfiguration()
        configuration.store = .appstore
        configuration.bundleID = AppStoreModeTests.bundleID
        configuration.faults = .requestOnly
        #expect(throws: ServerConfigurationError.self) { try configuration.validate() }
        configuration.store = .sandbox
        try configuration.validate()
    }
}

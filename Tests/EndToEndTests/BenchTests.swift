import CompressNIO
import Crypto
import Foundation
import NIOCore
import Testing

/// `kiosk bench`, the real binary on a loopback port, serving a folder of the test's with no purchase: content's
/// HTTP semantics, the folder's bounds, and scenario sequences, with raw HTTP and with curl as the clients.
@Suite("Bench: kiosk bench end to end")
struct BenchTests {
    /// A folder with a 200 KiB file (`big.bin`), a nested file, a link out and a folder outside it.
    private struct Folder {
        let root: URL
        var served: URL { root.appendingPathComponent("served") }
        let big: Data

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-bench-e2e-\(UUID())")
            let manager = FileManager.default
            try manager.createDirectory(
                at: root.appendingPathComponent("served/issues/2026"), withIntermediateDirectories: true)
            try manager.createDirectory(at: root.appendingPathComponent("outside"), withIntermediateDirectories: true)
            big = Data((0..<(200 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) })
            try big.write(to: served.appendingPathComponent("big.bin"))
            try Data("Issue 12".utf8).write(to: served.appendingPathComponent("issues/2026/issue 12.txt"))
            try Data("secret".utf8).write(to: root.appendingPathComponent("outside/secret.txt"))
            try manager.createSymbolicLink(
                atPath: served.appendingPathComponent("out").path, withDestinationPath: "../outside")
        }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    private func withBench(_ arguments: [String] = [], _ body: (ServeProcess, Folder) async throws -> Void)
        async throws
    {
        let folder = try Folder()
        defer { folder.remove() }
        try await ServeProcess.bench(folder: folder.served, arguments: arguments) { try await body($0, folder) }
    }

    private static func sha256(_ data: Data) -> Data { Data(SHA256.hash(data: data)) }
    private static func hexSHA256(_ data: Data) -> String { sha256(data).map { String(format: "%02x", $0) }.joined() }

    @Test func aFileIsServedWithContentsSemanticsAndNoPurchase() async throws {
        try await withBench { bench, folder in
            let whole = try await bench.send("GET", "/big.bin")
            #expect(whole.status == 200 && whole.body == folder.big)
            let digest = Self.sha256(folder.big)
            #expect(whole.header("Repr-Digest") == "sha-256=:\(digest.base64EncodedString()):")
            let tag = try #require(whole.header("ETag"))
            #expect(tag == "\"\(digest.map { String(format: "%02x", $0) }.joined())\"")
            #expect(whole.header("Accept-Ranges") == "bytes")

            let part = try await bench.send("GET", "/big.bin", headers: [("Range", "bytes=1000-1999")])
            #expect(part.status == 206 && part.body == folder.big[1000..<2000])
            #expect(part.header("Content-Range") == "bytes 1000-1999/204800")
            let resumed = try await bench.send(
                "GET", "/big.bin", headers: [("Range", "bytes=100000-"), ("If-Range", tag)])
            #expect(resumed.status == 206 && resumed.body == folder.big[100_000...])
            let stale = try await bench.send(
                "GET", "/big.bin", headers: [("Range", "bytes=100000-"), ("If-Range", "\"old\"")])
            #expect(stale.status == 200 && stale.body == folder.big)
            #expect(try await bench.send("GET", "/big.bin", headers: [("If-None-Match", tag)]).status == 304)
            #expect(try await bench.send("GET", "/big.bin", headers: [("If-Match", "\"old\"")]).status == 412)
            let outside = try await bench.send("GET", "/big.bin", headers: [("Range", "bytes=300000-")])
            #expect(outside.status == 416 && outside.header("Content-Range") == "bytes */204800")
            let head = try await bench.send("HEAD", "/big.bin")
            #expect(head.status == 200 && head.header("Content-Length") == "204800" && head.body.isEmpty)
            let nested = try await bench.send("GET", "/issues/2026/issue%2012.txt")
            #expect(nested.status == 200 && nested.text == "Issue 12")
            // A per-request fault at the plain path, as with kiosk serve.
            let cut = try await bench.send("GET", "/big.bin", headers: [("Kiosk-Fault", "status=503;retry-after=2")])
            #expect(cut.status == 503 && cut.header("Retry-After") == "2")
        }
    }

    @Test(arguments: [
        "/out/secret.txt", "/../outside/secret.txt", "/%2e%2e/outside/secret.txt", "/%2E%2E%2Foutside%2Fsecret.txt",
        "/issues/..%2f..%2foutside/secret.txt", "/s/none/out/secret.txt", "/s/none/../outside/secret.txt",
        "/issues", "/.hidden", "/nothing.bin", "/big.bin%00.txt",
    ])
    func nothingOutsideTheFolderNorAnythingButItsFilesIsServed(target: String) async throws {
        try await withBench { bench, _ in
            let answer = try await bench.send("GET", target)
            #expect(answer.status == 404, "\(target)")
            #expect(!answer.text.contains("secret") || answer.text.contains("No such file"))
            #expect(answer.header("Content-Type")?.hasPrefix("application/json") == true)
        }
    }

    @Test func aScenarioGivesEachRequestOfARunItsStep() async throws {
        try await withBench { bench, folder in
            // cut-twice: cut at 30 %, the resumed answer cut at half of it, then it works.
            let first = try await bench.send("GET", "/s/cut-twice/big.bin?run=a")
            #expect(first.status == 200 && first.body == folder.big.prefix(61_440))
            let tag = try #require(first.header("ETag"))
            let second = try await bench.send(
                "GET", "/s/cut-twice/big.bin?run=a", headers: [("Range", "bytes=61440-"), ("If-Range", tag)])
            #expect(second.status == 206 && second.body == folder.big[61_440..<(61_440 + 71_680)])
            let third = try await bench.send(
                "GET", "/s/cut-twice/big.bin?run=a", headers: [("Range", "bytes=133120-"), ("If-Range", tag)])
            #expect(third.status == 206 && third.body == folder.big[133_120...])
            // Another run, and another file of the same run, start from the first step.
            #expect(try await bench.send("GET", "/s/cut-twice/big.bin?run=b").body.count == 61_440)
            let busy = try await bench.send("GET", "/s/busy/big.bin?run=a")
            #expect(busy.status == 503 && busy.header("Retry-After") == "1")
            #expect(try await bench.send("GET", "/s/busy/big.bin?run=a").status == 503)
            #expect(try await bench.send("GET", "/s/busy/big.bin?run=a").body == folder.big)
            // A scenario that does not exist, and the list.
            let unknown = try await bench.send("GET", "/s/nope/big.bin")
            #expect(unknown.status == 404 && unknown.text.contains("nope"))
            let list = try await bench.send("GET", "/s/")
            let names = try #require(
                (try JSONSerialization.jsonObject(with: list.body) as? [String: Any])?["scenarios"] as? [[String: Any]])
            #expect(names.compactMap { $0["name"] as? String }.contains("cut-twice"))
        }
    }

    @Test func theSameSeedGivesTheSameRunAndRunsAreIndependent() async throws {
        // flaky: three cuts at offsets drawn from the seed, the run, the scenario, the file and the request.
        func cuts(seed: Int, run: String) async throws -> [Int] {
            var lengths: [Int] = []
            try await withBench(["--seed", String(seed)]) { bench, _ in
                for _ in 0..<4 {
                    lengths.append(try await bench.send("GET", "/s/flaky/big.bin?run=\(run)").body.count)
                }
            }
            return lengths
        }
        let first = try await cuts(seed: 42, run: "ci")
        #expect(first.prefix(3).allSatisfy { $0 < 204_800 } && first[3] == 204_800)
        #expect(try await cuts(seed: 42, run: "ci") == first)
        #expect(try await cuts(seed: 43, run: "ci") != first)
        #expect(try await cuts(seed: 42, run: "other") != first)
    }

    @Test func twoClientsInParallelHaveARunEach() async throws {
        try await withBench { bench, folder in
            // No ?run=: each client is its address and User-Agent.
            async let one = bench.send("GET", "/s/cut/big.bin", headers: [("User-Agent", "one")])
            async let two = bench.send("GET", "/s/cut/big.bin", headers: [("User-Agent", "two")])
            let (first, second) = try await (one, two)
            #expect(first.body.count == 61_440 && second.body.count == 61_440)
            let again = try await bench.send("GET", "/s/cut/big.bin", headers: [("User-Agent", "one")])
            #expect(again.body == folder.big)
        }
    }

    @Test(arguments: [
        "cut-twice", "busy", "server-error", "ignore-range", "validator-change", "flaky", "none", "node-drift",
        "node-drift-weak", "refused-range", "reset", "trickle",
    ])
    func curlResumingWithRetriesEndsWithTheExactBytes(scenario: String) async throws {
        try await withBench { bench, folder in
            let output = folder.root.appendingPathComponent("curl-\(scenario).bin")
            let url = "http://127.0.0.1:\(bench.port)/s/\(scenario)/big.bin"
            // A plain resume loop: curl -C - until it exits 0, at most 8 times.
            var status: Int32 = -1
            for _ in 0..<8 where status != 0 {
                status = try await Self.curl(["-sS", "-f", "-C", "-", "-o", output.path, url])
            }
            #expect(status == 0)
            #expect(try Data(contentsOf: output) == folder.big, "\(scenario)")
        }
    }

    @Test func theFaultsOfTheFieldAreInjected() async throws {
        try await withBench { bench, folder in
            let tag = try #require(try await bench.send("HEAD", "/big.bin").header("ETag"))
            // A 200 HTML error page, on a fresh request and on a resume.
            for headers in [[], [("Range", "bytes=1000-")]] {
                let page = try await bench.send("GET", "/big.bin", headers: headers + [("Kiosk-Fault", "error-page")])
                #expect(page.status == 200 && page.header("Content-Type") == "text/html; charset=utf-8")
                #expect(page.body.count > 3000 && page.body.count < 8192 && page.header("ETag") == nil)
                #expect(page.header("Content-Range") == nil && page.text.contains("<html"))
            }
            // Two nodes: the same bytes under other validators; a weak one never satisfies If-Range.
            let node = try await bench.send("GET", "/big.bin", headers: [("Kiosk-Fault", "node=2")])
            #expect(node.body == folder.big && node.header("ETag") == String(tag.dropLast()) + "-n2\"")
            let weak = try await bench.send(
                "GET", "/big.bin",
                headers: [
                    ("Kiosk-Fault", "node=1/weak"), ("Range", "bytes=10-"),
                    ("If-Range", "W/" + String(tag.dropLast()) + "-n1\""),
                ])
            #expect(weak.status == 200 && weak.header("ETag")?.hasPrefix("W/") == true)
            // Lying ranges.
            let range = [("Range", "bytes=100-199")]
            let missing = try await bench.send(
                "GET", "/big.bin", headers: range + [("Kiosk-Fault", "no-content-range")])
            #expect(missing.status == 206 && missing.header("Content-Range") == nil && missing.body.count == 100)
            let off = try await bench.send("GET", "/big.bin", headers: range + [("Kiosk-Fault", "range-off-by-one")])
            #expect(off.status == 206 && off.header("Content-Range") == "bytes 101-200/204800")
            #expect(off.body == folder.big[100..<200])
            let refused = try await bench.send("GET", "/big.bin", headers: range + [("Kiosk-Fault", "refuse-range")])
            #expect(refused.status == 416 && refused.header("Content-Range") == "bytes */204800")
            #expect(try await bench.send("GET", "/big.bin", headers: [("Kiosk-Fault", "refuse-range")]).status == 200)
            // A trickle: the same bytes, a few at a time.
            let trickled = try await bench.send("GET", "/big.bin", headers: [("Kiosk-Fault", "trickle=64KiB/1ms")])
            #expect(trickled.status == 200 && trickled.body == folder.big)
            // Redirects: to the other loopback origin, with the path and query kept, or to the same URL.
            let away = try await bench.send("GET", "/big.bin?run=x", headers: [("Kiosk-Fault", "redirect=origin")])
            #expect(away.status == 307 && away.header("Location") == "http://localhost:\(bench.port)/big.bin?run=x")
            let loop = try await bench.send("GET", "/big.bin", headers: [("Kiosk-Fault", "redirect=loop")])
            #expect(loop.status == 307 && loop.header("Location") == "http://127.0.0.1:\(bench.port)/big.bin")
            // Content-Length lies: a tenth more than the body, or a tenth less; either way the connection closes.
            let short = try await bench.send("GET", "/big.bin", headers: [("Kiosk-Fault", "length-lie=short")])
            #expect(short.header("Content-Length") == "225280" && short.body == folder.big)
            let long = try await bench.send("GET", "/big.bin", headers: range + [("Kiosk-Fault", "length-lie=long")])
            #expect(long.status == 206 && long.header("Content-Length") == "90" && long.body == folder.big[100..<200])
            // A reset before any header: no answer at all.
            await #expect(throws: (any Error).self) {
                try await bench.send("GET", "/big.bin", headers: [("Kiosk-Fault", "reset")])
            }
            #expect(try await bench.send("GET", "/big.bin").body == folder.big)
        }
    }

    @Test func anExpiredURLStaysExpiredUntilItIsRenewed() async throws {
        try await withBench { bench, folder in
            #expect(try await bench.send("GET", "/s/expired-url/big.bin?run=e").body.count == 102_400)
            let resume = [("Range", "bytes=102400-")]
            let expired = try await bench.send("GET", "/s/expired-url/big.bin?run=e", headers: resume)
            #expect(expired.status == 403 && expired.text.contains("Request has expired"))
            #expect(expired.header("Content-Type") == "application/xml")
            #expect(try await bench.send("GET", "/s/expired-url/big.bin?run=e", headers: resume).status == 403)
            let renewed = try await bench.send("GET", "/s/expired-url/big.bin?run=e&sig=2", headers: resume)
            #expect(renewed.status == 206 && renewed.body == folder.big[102_400...])
            let report = try await bench.send("GET", "/s/report")
            #expect(report.text.contains(#""faults":"expire""#))
        }
    }

    @Test func aPublicAddressNeedsTheFlagAndABadScenarioFileNamesItsLine() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let refused = try await ChildProcess.runKiosk(["bench", folder.served.path, "--host", "0.0.0.0"])
        #expect(refused.exitStatus != 0 && refused.standardError.contains("--allow-public"))
        let file = folder.root.appendingPathComponent("scenarios.json")
        try Data("{\"scenarios\": [\n  {\"name\": \"mine\",\n   \"steps\": [\"cut=lots\"]}]}".utf8).write(to: file)
        let bad = try await ChildProcess.runKiosk(["bench", folder.served.path, "--scenarios", file.path])
        #expect(bad.exitStatus != 0 && bad.standardError.contains("line 3"))
        let missing = try await ChildProcess.runKiosk(["bench", folder.root.appendingPathComponent("no").path])
        #expect(missing.exitStatus != 0 && missing.standardError.contains("not a folder"))
    }

    @Test func aScenarioFilesScenariosAreServed() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let file = folder.root.appendingPathComponent("scenarios.json")
        try Data(#"{"scenarios": [{"name": "cut-then-busy", "steps": ["cut=10%", "status=503"]}]}"#.utf8)
            .write(to: file)
        try await ServeProcess.bench(
            folder: folder.served, arguments: ["--scenarios", file.path, "--seed", "7", "--log-level", "info"]
        ) { (bench: ServeProcess) async throws in
            #expect(try await bench.send("GET", "/s/cut-then-busy/big.bin?run=x").body.count == 20_480)
            #expect(try await bench.send("GET", "/s/cut-then-busy/big.bin?run=x").status == 503)
            #expect(try await bench.send("GET", "/s/cut-then-busy/big.bin?run=x").status == 200)
            #expect(bench.standardError.contains("seed=7"))
            #expect(bench.standardError.contains("scenario=cut-then-busy"))
        }
    }

    @Test func theVerdictSaysHowEachClientCoped() async throws {
        // Stopped, the bench writes the verdict below and exits with 1: not every run passed.
        let written = try await reportOfBench(exiting: 1) { bench, folder in
            let fileSHA = Self.hexSHA256(folder.big)
            func said(_ run: String, _ scenario: String, _ body: String) async throws -> Int {
                try await bench.send("PUT", "/s/\(scenario)/big.bin?run=\(run)", body: Data(body.utf8)).status
            }
            // curl keeps the 200 error page as the file: it fails.
            let saved = folder.root.appendingPathComponent("curl.bin")
            let url = "http://127.0.0.1:\(bench.port)/s/error-page/big.bin?run=curl"
            #expect(try await Self.curl(["-sS", "-f", "-C", "-", "-o", saved.path, url]) == 0)
            let curlSHA = Self.hexSHA256(try Data(contentsOf: saved))
            #expect(try await said("curl", "error-page", #"{"sha256": "\#(curlSHA)"}"#) == 204)
            // A careful client looks at the Content-Type, asks again and gets the file.
            let page = try await bench.send("GET", "/s/error-page/big.bin?run=careful")
            #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(try await bench.send("GET", "/s/error-page/big.bin?run=careful").body == folder.big)
            #expect(try await said("careful", "error-page", #"{"sha256": "\#(fileSHA.uppercased())"}"#) == 204)
            // A client that starts over after a cut: right bytes, one restart, 1.3 times the file sent.
            #expect(try await bench.send("GET", "/s/cut/big.bin?run=restarter").body.count == 61_440)
            #expect(try await bench.send("GET", "/s/cut/big.bin?run=restarter").body == folder.big)
            #expect(try await said("restarter", "cut", #"{"sha256": "\#(fileSHA)"}"#) == 204)
            // One that gives up, and one that never says.
            _ = try await bench.send("GET", "/s/busy/big.bin?run=quitter")
            #expect(try await said("quitter", "busy", #"{"error": "503"}"#) == 204)
            _ = try await bench.send("GET", "/s/cut/big.bin?run=silent")
            // What the bench refuses.
            #expect(try await said("x", "cut", #"{"sha256": "abc"}"#) == 400)
            #expect(try await said("x", "cut", #"{"sha256": "\#(fileSHA)", "error": "both"}"#) == 400)
            #expect(try await said("x", "cut", "not json") == 400)
            #expect(try await said("x", "nope", #"{"error": "x"}"#) == 404)

            let report = try await bench.send("GET", "/s/report")
            let json = try #require(try JSONSerialization.jsonObject(with: report.body) as? [String: Any])
            let runs = try #require(json["runs"] as? [[String: Any]])
            func entry(_ run: String) throws -> [String: Any] {
                try #require(runs.first { $0["run"] as? String == run })
            }
            #expect(try entry("curl")["verdict"] as? String == "fail")
            #expect(try entry("curl")["error_page_accepted"] as? Bool == true)
            #expect(try entry("careful")["verdict"] as? String == "pass")
            #expect(try entry("careful")["error_page_accepted"] as? Bool == false)
            #expect(try entry("restarter")["verdict"] as? String == "pass")
            #expect(try entry("restarter")["restarts_from_zero"] as? Int == 1)
            #expect(try entry("restarter")["bytes_sent_over_file_size"] as? Double == 1.3)
            let requests = try #require(try entry("restarter")["requests"] as? [[String: Any]])
            #expect(requests.map { $0["bytes_sent"] as? Int } == [61_440, 204_800])
            #expect(requests.map { $0["faults"] as? String } == ["cut=30%", "none"])
            #expect(try entry("quitter")["verdict"] as? String == "fail")
            #expect(try entry("silent")["verdict"] as? String == "unknown")
            #expect(json["pass"] as? Bool == false && json["passed"] as? Int == 2 && json["failed"] as? Int == 2)
        }
        #expect((written["runs"] as? [Any])?.count == 5 && written["pass"] as? Bool == false)
    }

    @Test func aBenchWhoseRunsAllPassExitsWithZero() async throws {
        let written = try await reportOfBench(exiting: 0) { bench, folder in
            let fileSHA = Self.hexSHA256(folder.big)
            let output = folder.root.appendingPathComponent("out.bin")
            let url = "http://127.0.0.1:\(bench.port)/s/cut-twice/big.bin?run=ci"
            var status: Int32 = -1
            for _ in 0..<8 where status != 0 {
                status = try await Self.curl(["-sS", "-f", "-C", "-", "-o", output.path, url])
            }
            #expect(Self.hexSHA256(try Data(contentsOf: output)) == fileSHA)
            let put = try await bench.send(
                "PUT", "/s/cut-twice/big.bin?run=ci", body: Data(#"{"sha256": "\#(fileSHA)"}"#.utf8))
            #expect(put.status == 204)
        }
        let run = try #require((written["runs"] as? [[String: Any]])?.first)
        #expect(run["verdict"] as? String == "pass" && run["restarts_from_zero"] as? Int == 0)
        #expect(run["bytes_sent_over_file_size"] as? Double == 1.0)
    }

    /// `bytes-changed`: cut at half, then the file has changed for good. The resume's 206 is a range of the new
    /// version (every byte XOR 0x5A) with its own validators and digest, whatever its If-Range says; the
    /// preconditions hold against the new validators.
    @Test func aFileThatChangedForGoodAnswersTheNewVersionsRange() async throws {
        try await withBench { bench, folder in
            let changed = Data(folder.big.map { $0 ^ 0x5A })
            let changedSHA = Self.sha256(changed)
            let path = "/s/bytes-changed/big.bin?run=raw"
            let first = try await bench.send("GET", path)
            #expect(first.status == 200 && first.body == folder.big.prefix(102_400))
            let tag = try #require(first.header("ETag"))
            let lastModified = try #require(first.header("Last-Modified"))
            let resume = [("Range", "bytes=102400-"), ("If-Range", tag)]
            let resumed = try await bench.send("GET", path, headers: resume)
            #expect(resumed.status == 206 && resumed.body == changed[102_400...])
            #expect(resumed.header("Content-Range") == "bytes 102400-204799/204800")
            #expect(resumed.header("Content-Length") == "102400")
            let newTag = try #require(resumed.header("ETag"))
            #expect(newTag != tag && newTag == "\"\(Self.hexSHA256(changed))\"")
            #expect(resumed.header("Repr-Digest") == "sha-256=:\(changedSHA.base64EncodedString()):")
            #expect(resumed.header("Last-Modified").map { $0 != lastModified } == true)
            // Every later answer is the new version: whole, ranged, and against its own validators.
            #expect(try await bench.send("GET", path).body == changed)
            let middle = try await bench.send("GET", path, headers: [("Range", "bytes=1000-1999")])
            #expect(middle.status == 206 && middle.body == changed[1000..<2000])
            #expect(try await bench.send("GET", path, headers: [("If-Match", tag)] + resume).status == 412)
            #expect(try await bench.send("GET", path, headers: [("If-None-Match", newTag)]).status == 304)
            let list = try await bench.send("GET", "/s/")
            #expect(list.text.contains(#""outcome":"new-bytes-or-error""#))
        }
    }

    /// `bytes-changed` with curl: `curl -C -` appends the new version's second half to the old first half, a mix the
    /// report fails; a client that fetches the changed file whole passes, and so does one that gives up.
    @Test func curlStitchingTheNewVersionOntoTheOldFails() async throws {
        try await withBench { bench, folder in
            let changed = Data(folder.big.map { $0 ^ 0x5A })
            func url(_ run: String) -> String { "http://127.0.0.1:\(bench.port)/s/bytes-changed/big.bin?run=\(run)" }
            func said(_ run: String, _ body: String) async throws -> Int {
                try await bench.send("PUT", "/s/bytes-changed/big.bin?run=\(run)", body: Data(body.utf8)).status
            }
            // curl -C -: cut, then resumed with the new version's range, which it appends.
            let stitched = folder.root.appendingPathComponent("stitched.bin")
            var status: Int32 = -1
            for _ in 0..<8 where status != 0 {
                status = try await Self.curl(["-sS", "-f", "-C", "-", "-o", stitched.path, url("stitcher")])
            }
            let mix = try Data(contentsOf: stitched)
            #expect(status == 0 && mix == folder.big.prefix(102_400) + changed[102_400...])
            #expect(try await said("stitcher", #"{"sha256": "\#(Self.hexSHA256(mix))"}"#) == 204)
            // A fresh download after the cut (no -C): the new version whole.
            let whole = folder.root.appendingPathComponent("whole.bin")
            #expect(try await Self.curl(["-sS", "-f", "-o", whole.path, url("fresh")]) != 0)
            #expect(try await Self.curl(["-sS", "-f", "-o", whole.path, url("fresh")]) == 0)
            #expect(try Data(contentsOf: whole) == changed)
            #expect(try await said("fresh", #"{"sha256": "\#(Self.hexSHA256(changed))"}"#) == 204)
            // One that notices the change and gives up.
            _ = try await bench.send("GET", "/s/bytes-changed/big.bin?run=quitter")
            #expect(try await said("quitter", #"{"error": "the file changed"}"#) == 204)

            let report = try await bench.send("GET", "/s/report")
            let json = try #require(try JSONSerialization.jsonObject(with: report.body) as? [String: Any])
            let runs = try #require(json["runs"] as? [[String: Any]])
            func entry(_ run: String) throws -> [String: Any] {
                try #require(runs.first { $0["run"] as? String == run })
            }
            let stitcher = try entry("stitcher")
            #expect(stitcher["verdict"] as? String == "fail" && stitcher["expected"] as? String == "new-bytes-or-error")
            #expect(stitcher["changed_sha256"] as? String == Self.hexSHA256(changed))
            #expect(stitcher["file_sha256"] as? String == Self.hexSHA256(folder.big))
            #expect((stitcher["reasons"] as? [String])?.first?.contains("neither the new version's") == true)
            let requests = try #require(stitcher["requests"] as? [[String: Any]])
            #expect(requests.map { $0["faults"] as? String } == ["cut=50%", "changed"])
            #expect(requests.map { $0["status"] as? Int } == [200, 206])
            #expect(try entry("fresh")["verdict"] as? String == "pass")
            #expect(try entry("quitter")["verdict"] as? String == "pass")
        }
    }

    /// `gzip-range`: cut at half; the resumed 206 comes gzipped, with the `Content-Range` of the uncompressed range
    /// and no `Content-Length` (chunked), and gunzips to exactly that range; the next request has no fault.
    @Test func aResumedRangeComesGzipped() async throws {
        try await withBench { bench, folder in
            let path = "/s/gzip-range/big.bin?run=raw"
            #expect(try await bench.send("GET", path).body == folder.big.prefix(102_400))
            let resume = [("Range", "bytes=102400-")]
            let gzipped = try await bench.send("GET", path, headers: resume)
            #expect(gzipped.status == 206 && gzipped.header("Content-Encoding") == "gzip")
            #expect(gzipped.header("Content-Range") == "bytes 102400-204799/204800")
            #expect(gzipped.header("Content-Length") == nil && gzipped.header("Transfer-Encoding") == "chunked")
            var compressed = ByteBuffer(bytes: gzipped.body)
            #expect(Data(try compressed.decompress(with: .gzip()).readableBytesView) == folder.big[102_400...])
            #expect(gzipped.body != folder.big[102_400...])
            let plain = try await bench.send("GET", path, headers: resume)
            #expect(
                plain.status == 206 && plain.header("Content-Encoding") == nil && plain.body == folder.big[102_400...])
            // A whole answer under the fault is gzipped the same way.
            let whole = try await bench.send("GET", "/big.bin", headers: [("Kiosk-Fault", "gzip-range")])
            var body = ByteBuffer(bytes: whole.body)
            #expect(whole.status == 200 && whole.header("Content-Encoding") == "gzip")
            #expect(Data(try body.decompress(with: .gzip()).readableBytesView) == folder.big)
        }
    }

    /// `gzip-range` with curl: without `--compressed` it appends the gzip bytes to the first half and reports
    /// success with a wrong file, which the report fails; with `--compressed` it decodes them and passes.
    @Test func curlAppendingAGzippedRangeEndsWithAWrongFile() async throws {
        try await withBench { bench, folder in
            func resumeLoop(_ run: String, _ options: [String]) async throws -> Data {
                let output = folder.root.appendingPathComponent("\(run).bin")
                let url = "http://127.0.0.1:\(bench.port)/s/gzip-range/big.bin?run=\(run)"
                var status: Int32 = -1
                for _ in 0..<8 where status != 0 {
                    status = try await Self.curl(options + ["-sS", "-f", "-C", "-", "-o", output.path, url])
                }
                #expect(status == 0)
                let saved = try Data(contentsOf: output)
                let body = #"{"sha256": "\#(Self.hexSHA256(saved))"}"#
                let put = try await bench.send("PUT", "/s/gzip-range/big.bin?run=\(run)", body: Data(body.utf8))
                #expect(put.status == 204)
                return saved
            }
            let appended = try await resumeLoop("plain", [])
            #expect(appended != folder.big && appended.prefix(102_400) == folder.big.prefix(102_400))
            #expect(appended[102_400...].prefix(2) == Data([0x1F, 0x8B]))
            #expect(try await resumeLoop("decoder", ["--compressed"]) == folder.big)

            let report = try await bench.send("GET", "/s/report")
            let json = try #require(try JSONSerialization.jsonObject(with: report.body) as? [String: Any])
            let runs = try #require(json["runs"] as? [[String: Any]])
            let verdicts = Dictionary(
                uniqueKeysWithValues: runs.compactMap { run in
                    (run["run"] as? String).map { ($0, run["verdict"] as? String) }
                })
            #expect(verdicts == ["plain": "fail", "decoder": "pass"])
        }
    }

    /// Runs `body` against `kiosk bench --report FILE` on a fresh folder, stops the bench (`SIGTERM`), expects it
    /// to exit with `exitStatus`, and gives the report it wrote.
    private func reportOfBench(
        exiting exitStatus: Int32, _ body: (ServeProcess, Folder) async throws -> Void
    ) async throws -> [String: Any] {
        let folder = try Folder()
        defer { folder.remove() }
        let reportFile = folder.root.appendingPathComponent("verdict.json")
        try await ServeProcess.bench(folder: folder.served, arguments: ["--report", reportFile.path]) {
            (bench: ServeProcess) async throws in
            try await body(bench, folder)
            bench.terminate()
            #expect(try await bench.exitStatus(within: .seconds(30)) == exitStatus)
        }
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: reportFile)) as? [String: Any])
    }

    /// Runs curl with `arguments` and gives its exit status.
    private static func curl(_ arguments: [String]) async throws -> Int32 {
        let path = ["/usr/bin/curl", "/usr/local/bin/curl", "/bin/curl"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        let executable = try #require(path, "curl is needed (.ci/run installs it)")
        return try await RawHTTP.onThread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
    }
}

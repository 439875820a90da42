import Foundation
import KioskCore
import KioskServer
import Testing

/// `--offload nginx:PREFIX` behind a real nginx configured by `deploy/nginx/kiosk-offload.conf`: every range and
/// conditional case of the direct tests gives a client the same status, headers and bytes through nginx as from
/// Kiosk alone; refusals stay Kiosk's JSON; the internal locations are closed to clients; `kiosk get` installs
/// exact bytes through nginx.
@Suite(
    "nginx offload", .enabled(if: NginxOffloadProxy.isAvailable, NginxOffloadProxy.unavailableReason),
    .timeLimit(.minutes(5)))
struct NginxOffloadTests {
    /// Two Kiosk servers over identical content (same bytes, same modification times, so the same validators):
    /// one answering itself, one offloading to nginx in front of it.
    struct Pair {
        let direct: TestServer
        let offloaded: TestServer
        let nginx: NginxOffloadProxy

        /// Runs `body` against a fresh pair, whose content `prepare` may add to first, and stops them all
        /// afterwards.
        static func with<T>(
            prepare: @escaping (URL) throws -> Void = { _ in }, _ body: (Pair) async throws -> T
        ) async throws -> T {
            let prepareContent = { (folder: URL) in
                try prepare(folder)
                try setModificationTimes(of: folder)
            }
            return try await TestServer.with(prepareContent: prepareContent) { direct in
                try await TestServer.with(
                    prepareContent: prepareContent,
                    configure: { $0.offload = .nginx(prefix: NginxOffloadProxy.prefix) }
                ) { offloaded in
                    try await NginxOffloadProxy.with(
                        kioskPort: offloaded.port, contentDirectory: offloaded.contentDirectory
                    ) { nginx in
                        try await body(Pair(direct: direct, offloaded: offloaded, nginx: nginx))
                    }
                }
            }
        }

        /// Gives every file of a content folder the same modification time.
        private static func setModificationTimes(of folder: URL) throws {
            let date = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01
            let files = FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String] ?? []
            for file in files {
                try FileManager.default.setAttributes(
                    [.modificationDate: date], ofItemAtPath: folder.appendingPathComponent(file).path)
            }
        }
    }

    /// One way of reaching a file: a server (Kiosk, or nginx in front of it), the file's URL and a token for it.
    struct Side {
        let server: any LoopbackKioskServer
        let url: String
        let token: String

        /// Buys `productID` on `server` and takes the grant's file at `path`.
        static func buying(_ productID: String, path: String, on server: any LoopbackKioskServer) async throws -> Side {
            let purchase = try await server.buy(productID)
            let grant = try await server.grant(productID, receipt: purchase.receiptData)
            let file = try #require(grant.files.first { $0.path == path })
            return Side(server: server, url: file.url, token: grant.token)
        }

        /// `method` of the file with the token and `headers`.
        func send(_ method: String, headers: [(String, String)]) async throws -> RawHTTPResponse {
            try await server.send(method, url, headers: [("Authorization", "Bearer \(token)")] + headers)
        }
    }

    /// What a client sees of an answer and what must be the same with and without offload: the status, the
    /// headers below (each with all its values, so a header nginx would repeat counts) and the body, byte for byte,
    /// a multipart boundary written as `BOUNDARY` (each answer draws its own).
    struct Seen: Equatable, CustomStringConvertible {
        /// The headers compared.
        static let names = [
            "ETag", "Last-Modified", "Cache-Control", "Repr-Digest", "Accept-Ranges", "Content-Type", "Content-Range",
            "Content-Length", "Transfer-Encoding", "WWW-Authenticate", "X-Accel-Redirect",
        ]

        var status: Int
        var headers: [String: [String]]
        var body: Data

        init(_ response: RawHTTPResponse) {
            status = response.status
            headers = Dictionary(
                uniqueKeysWithValues: Self.names.map { name in
                    (name, response.headers.filter { $0.0.caseInsensitiveCompare(name) == .orderedSame }.map(\.1))
                })
            body = response.body
            let multipart = "multipart/byteranges; boundary="
            if let type = response.header("Content-Type"), type.hasPrefix(multipart) {
                let boundary = Data(type.dropFirst(multipart.count).utf8)
                headers["Content-Type"] = [multipart + "BOUNDARY"]
                body = Self.replacing(boundary, with: Data("BOUNDARY".utf8), in: body)
            }
        }

        private static func replacing(_ target: Data, with replacement: Data, in data: Data) -> Data {
            var result = Data()
            var rest = data[...]
            while let found = rest.range(of: target) {
                result += rest[rest.startIndex..<found.lowerBound] + replacement
                rest = rest[found.upperBound...]
            }
            return result + rest
        }

        var description: String {
            let shown = headers.filter { !$0.value.isEmpty }.sorted { $0.key < $1.key }
            return "\(status) \(shown) \(body.count) bytes: \(String(decoding: body.prefix(200), as: UTF8.self))"
        }
    }

    /// A request of the range table: its headers, from the file's validators and length.
    struct RangeCase: Sendable, CustomStringConvertible {
        var name: String
        var headers: @Sendable (ServerConditionalRequestTests.Validators, Int64) -> [(String, String)]
        var description: String { name }

        /// A case of one `Range` value.
        static func range(_ value: @escaping @Sendable (Int64) -> String) -> RangeCase {
            RangeCase(name: "Range", headers: { [("Range", value($1))] })
        }
    }

    static let thirtyDigits = String(repeating: "9", count: 30)

    /// Ranges of RangeEvaluationTests over the wire, on a file of length L, with If-Range.
    static let rangeCases: [RangeCase] = [
        RangeCase(name: "no Range", headers: { _, _ in [] }),
        // One satisfiable range, as nginx reads it, and as Kiosk alone does.
        .range { _ in "bytes=0-0" }, .range { _ in "bytes=0-" }, .range { _ in "bytes=-1" },
        .range { _ in "bytes=0-499" }, .range { _ in "bytes=500-" }, .range { _ in "bytes=-500" },
        .range { "bytes=-\($0)" }, .range { "bytes=-\($0 + 1)" }, .range { _ in "bytes=-\(thirtyDigits)" },
        .range { _ in "bytes=-9223372036854775807" }, .range { "bytes=\($0 - 1)-" },
        .range { "bytes=\($0 - 10)-\($0)" }, .range { _ in "bytes=0-\(thirtyDigits)" },
        .range { _ in "bytes=0-9223372036854775807" }, .range { _ in "BYTES=0-9" }, .range { _ in "bytes=007-009" },
        .range { _ in "bytes=  0-9" }, .range { _ in "  bytes=0-9  " }, .range { _ in "bytes=,0-9," },
        .range { "bytes=0-9, \($0)-" }, .range { "bytes=\($0 + 2000)-,0-9,-0" },
        .range { _ in "bytes=\(thirtyDigits)-,5-5" },
        // Unsatisfiable: 416.
        .range { "bytes=\($0)-" }, .range { _ in "bytes=-0" }, .range { "bytes=\($0)-\($0 + 10)" },
        .range { _ in "bytes=\(thirtyDigits)-" },
        // Ignored: 200.
        .range { _ in "" }, .range { _ in "bytes=" }, .range { _ in "items=0-1" }, .range { _ in "bytes 0-1" },
        .range { _ in "bytes=5-4" }, .range { _ in "bytes=0-1,5-4" }, .range { _ in "bytes=0x0-0x10" },
        .range { _ in "garbage" }, .range { _ in "bytes=0-,0-" },
        // Several: multipart/byteranges, or 200 past the cap or when they add up to more than the file.
        .range { _ in "bytes=0-4, 10-19,-3" }, .range { _ in "bytes=0-9,5-14" },
        .range { _ in "bytes=" + (0..<40).map { "\($0 * 2)-\($0 * 2)" }.joined(separator: ",") },
        // If-Range: held (206), failed (200), and forms Kiosk answers itself.
        RangeCase(name: "If-Range ETag", headers: { v, _ in [("Range", "bytes=0-9"), ("If-Range", v.eTag)] }),
        RangeCase(name: "If-Range ETag, suffix", headers: { v, _ in [("Range", "bytes=-100"), ("If-Range", v.eTag)] }),
        RangeCase(name: "If-Range other", headers: { _, _ in [("Range", "bytes=0-9"), ("If-Range", "\"0000\"")] }),
        RangeCase(name: "If-Range weak", headers: { v, _ in [("Range", "bytes=0-9"), ("If-Range", "W/\(v.eTag)")] }),
        RangeCase(
            name: "If-Range date", headers: { v, _ in [("Range", "bytes=0-9"), ("If-Range", v.lastModified)] }),
        RangeCase(
            name: "If-Range date + 1 s",
            headers: { v, _ in [("Range", "bytes=0-9"), ("If-Range", v.lastModified(plus: 1))] }),
        RangeCase(
            name: "If-Range RFC 850 date",
            headers: { v, _ in
                let date = HTTPDate.parse(v.lastModified)!
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "GMT")
                formatter.dateFormat = "EEEE, dd-MMM-yy HH:mm:ss 'GMT'"
                return [("Range", "bytes=0-9"), ("If-Range", formatter.string(from: date))]
            }),
        RangeCase(name: "If-Range without Range", headers: { v, _ in [("If-Range", v.eTag)] }),
        RangeCase(
            name: "If-Range ETag, several ranges",
            headers: { v, _ in [("Range", "bytes=0-4,10-19"), ("If-Range", v.eTag)] }),
        RangeCase(
            name: "If-Range other, unsatisfiable",
            headers: { _, l in [("Range", "bytes=\(l)-"), ("If-Range", "\"0\"")] }
        ),
    ]

    /// Buys the book on both sides and reads the validators of its file.
    static func sides(_ pair: Pair) async throws -> (
        direct: Side, offloaded: Side, validators: ServerConditionalRequestTests.Validators, length: Int64
    ) {
        let path = "Contents/book.epub"
        let direct = try await Side.buying(TestServer.Sample.book, path: path, on: pair.direct)
        let offloaded = try await Side.buying(TestServer.Sample.book, path: path, on: pair.nginx)
        let plain = try await direct.send("GET", headers: [])
        let validators = ServerConditionalRequestTests.Validators(
            eTag: try #require(plain.header("ETag")), lastModified: try #require(plain.header("Last-Modified")))
        return (direct, offloaded, validators, Int64(plain.body.count))
    }

    /// Whether `headers` have an `If-*` field twice, which nginx refuses with 400 whatever is behind it.
    static func repeatsAConditionalField(_ headers: [(String, String)]) -> Bool {
        let names = headers.map { $0.0.lowercased() }.filter { $0.hasPrefix("if-") }
        return Set(names).count < names.count
    }

    /// Sends `headers` with `method` to both sides and expects the same answer.
    static func expectSame(
        _ method: String, _ headers: [(String, String)], direct: Side, offloaded: Side, _ label: String
    ) async throws {
        let expected = Seen(try await direct.send(method, headers: headers))
        let seen = Seen(try await offloaded.send(method, headers: headers))
        #expect(seen == expected, "\(label): through nginx \(seen), from Kiosk \(expected)")
    }

    @Test("every conditional case", arguments: ServerConditionalRequestTests.requests)
    func conditionalCases(method: String, range: String?) async throws {
        try await Pair.with { pair in
            let (direct, offloaded, validators, _) = try await Self.sides(pair)
            for testCase in ServerConditionalRequestTests.cases {
                let headers = (range.map { [("Range", $0)] } ?? []) + testCase.headers(validators)
                let label = "\(method) \(range ?? "whole") \(testCase)"
                guard !Self.repeatsAConditionalField(headers) else {
                    // The one difference: nginx refuses a repeated If-* field itself (400, its own page), before
                    // Kiosk sees the request, as in front of any server.
                    #expect(try await offloaded.send(method, headers: headers).status == 400, "\(label)")
                    continue
                }
                try await Self.expectSame(method, headers, direct: direct, offloaded: offloaded, label)
            }
        }
    }

    @Test("every range case", arguments: ["GET", "HEAD"])
    func rangeCases(method: String) async throws {
        try await Pair.with { pair in
            let (direct, offloaded, validators, length) = try await Self.sides(pair)
            for testCase in Self.rangeCases {
                let headers = testCase.headers(validators, length)
                try await Self.expectSame(
                    method, headers, direct: direct, offloaded: offloaded, "\(method) \(testCase) \(headers)")
            }
        }
    }

    @Test func nginxSendsTheFilesKioskAdmits() async throws {
        try await Pair.with { pair in
            let (_, offloaded, validators, length) = try await Self.sides(pair)
            for headers in [
                [], [("Range", "bytes=0-9")], [("Range", "bytes=-100")], [("Range", "bytes=100-")],
                [("Range", "bytes=0-9"), ("If-Range", validators.eTag)],
                [("Range", "bytes=0-9"), ("If-Range", "\"0\"")],
                [("If-None-Match", "\"0\"")], [("If-Modified-Since", validators.lastModified(plus: -1))],
            ] as [[(String, String)]] {
                let response = try await offloaded.send("GET", headers: headers)
                #expect([200, 206].contains(response.status), "\(headers)")
            }
            // Not one byte of these came from Kiosk; a HEAD and several ranges do.
            #expect(pair.offloaded.contentBytesSent == 0)
            #expect(try await pair.offloaded.metric("kiosk_content_offloaded_total{location=\"full\"}") == 4)
            #expect(try await pair.offloaded.metric("kiosk_content_offloaded_total{location=\"range\"}") == 4)
            _ = try await offloaded.send("GET", headers: [("Range", "bytes=0-4,10-19")])
            #expect(pair.offloaded.contentBytesSent > 0)
            #expect(length > 0)
        }
    }

    @Test func packsStayWithKiosk() async throws {
        try await Pair.with { pair in
            var sides: [Side] = []
            for server in [pair.direct, pair.nginx] as [any LoopbackKioskServer] {
                let purchase = try await server.buy(TestServer.Sample.levels)
                let grant = try await server.grant(TestServer.Sample.levels, receipt: purchase.receiptData)
                let pack = try #require(grant.pack, "the levels have a pack")
                sides.append(Side(server: server, url: pack.url, token: grant.token))
            }
            for headers in [[], [("Range", "bytes=0-99")], [("Range", "bytes=100-199,-5")]] as [[(String, String)]] {
                try await Self.expectSame("GET", headers, direct: sides[0], offloaded: sides[1], "pack \(headers)")
            }
            #expect(pair.offloaded.contentBytesSent > 0)
            #expect(try await pair.offloaded.metric("kiosk_content_offloaded_total{location=\"full\"}") == 0)
        }
    }

    @Test func refusalsAreKiosksJSONThroughNginx() async throws {
        try await Pair.with { pair in
            let (direct, offloaded, _, _) = try await Self.sides(pair)
            let missing = try await pair.nginx.send("GET", offloaded.url)
            #expect(try Self.code(missing) == "401 token_missing")
            #expect(missing.header("WWW-Authenticate") == "Bearer")
            let forged = Side(server: pair.nginx, url: offloaded.url, token: offloaded.token + "x")
            #expect(try Self.code(await forged.send("GET", headers: [])) == "401 token_invalid")
            let magazine = try await Side.buying(TestServer.Sample.magazine, path: "Contents/toc.json", on: pair.nginx)
            let crossed = Side(server: pair.nginx, url: magazine.url, token: offloaded.token)
            #expect(try Self.code(await crossed.send("GET", headers: [])) == "403 token_scope")

            // Revoked: the purchase refunded, the grant it had stops opening the file.
            let purchase = try await pair.nginx.buy(TestServer.Sample.levels, user: "refunded")
            let grant = try await pair.nginx.grant(TestServer.Sample.levels, receipt: purchase.receiptData)
            let level = Side(server: pair.nginx, url: try #require(grant.files.first).url, token: grant.token)
            #expect(try await level.send("GET", headers: []).status == 200)
            _ = try await pair.nginx.notify(purchase.transactionID, .refund)
            #expect(try Self.code(await level.send("GET", headers: [])) == "403 transaction_revoked")

            // Fault injection asked for: refused, by header or query parameter, with or without a range.
            for (url, headers) in [
                (offloaded.url, [("Kiosk-Fault", "cut=100")]), (offloaded.url + "?fault=status=503", []),
                (offloaded.url, [("Kiosk-Fault", "cut=100"), ("Range", "bytes=0-9")]),
            ] as [(String, [(String, String)])] {
                let response = try await Side(server: pair.nginx, url: url, token: offloaded.token)
                    .send("GET", headers: headers)
                #expect(try Self.code(response) == "400 bad_request")
                let envelope = try KioskJSON.decode(APIErrorEnvelope.self, from: response.body)
                #expect(envelope.error.reason == "faults_offloaded")
            }
            // Without offload a server that has no --faults ignores the header.
            #expect(try await direct.send("GET", headers: [("Kiosk-Fault", "cut=100")]).status == 200)
        }
    }

    @Test func theInternalLocationsAreClosedToClients() async throws {
        try await Pair.with { pair in
            let (_, offloaded, _, _) = try await Self.sides(pair)
            let file = String(offloaded.url.dropFirst("/v1/content/".count))
            for location in [NginxOffloadProxy.prefix, NginxOffloadProxy.prefix + "-full"] {
                for headers in [[], [("Authorization", "Bearer \(offloaded.token)")]] as [[(String, String)]] {
                    let response = try await pair.nginx.send("GET", "\(location)/\(file)", headers: headers)
                    #expect(response.status == 404, "\(location)")
                    #expect(response.body.count < 1000, "\(location)")
                }
            }
        }
    }

    /// A product whose file names need percent-encoding (spaces, `+`, `,`, parentheses: what a file path may hold).
    static let oddProduct = "com.example.kiosk.odd-names"
    /// Its files, and how `X-Accel-Redirect` writes them.
    static let oddFiles = [
        "Contents/a b (1)+c,d.bin": "Contents/a%20b%20%281%29%2Bc%2Cd.bin",
        "Contents/sub dir/x+y.bin": "Contents/sub%20dir/x%2By.bin",
    ]

    /// Writes ``oddProduct`` into a content folder.
    static func addOddProduct(to content: URL) throws {
        let folder = content.appendingPathComponent(oddProduct)
        let info = ["product_id": oddProduct, "type": "non_consumable", "title": "Odd names", "content_version": "1"]
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: info).write(to: folder.appendingPathComponent("Info.json"))
        for (index, path) in oddFiles.keys.sorted().enumerated() {
            let url = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 * (index + 3)) }).write(to: url)
        }
    }

    @Test func fileNamesThatNeedEncodingReachNginx() async throws {
        try await Pair.with(prepare: Self.addOddProduct) { pair in
            for path in Self.oddFiles.keys.sorted() {
                let direct = try await Side.buying(Self.oddProduct, path: path, on: pair.direct)
                let offloaded = try await Side.buying(Self.oddProduct, path: path, on: pair.nginx)
                for headers in [[], [("Range", "bytes=1-3")]] as [[(String, String)]] {
                    try await Self.expectSame(
                        "GET", headers, direct: direct, offloaded: offloaded, "\(path) \(headers)")
                }
                // What nginx got from Kiosk: the path percent-encoded, each of its segments.
                let redirect = try await pair.offloaded.send(
                    "GET", offloaded.url, headers: [("Authorization", "Bearer \(offloaded.token)")])
                #expect(
                    redirect.header("X-Accel-Redirect")
                        == "\(NginxOffloadProxy.prefix)-full/\(Self.oddProduct)/1/\(Self.oddFiles[path] ?? "")")
                #expect(redirect.status == 200 && redirect.body.isEmpty)
            }
            #expect(pair.offloaded.contentBytesSent == 0)
        }
    }

    @Test func kioskGetInstallsExactBytesThroughNginx() async throws {
        try await Pair.with { pair in
            let purchase = try await pair.nginx.buy(TestServer.Sample.magazine)
            let cache = pair.offloaded.makeScratchDirectory()
            let outcome = try await ChildProcess.runKiosk(
                [
                    "get", TestServer.Sample.magazine, "--receipt", "-", "--server",
                    "http://127.0.0.1:\(pair.nginx.port)",
                    "--cache", cache.path,
                ], input: Data(purchase.receiptData.utf8))
            #expect(outcome.exitStatus == 0, "\(outcome)")
            let product = pair.offloaded.contentDirectory.appendingPathComponent(TestServer.Sample.magazine)
            let installed = cache.appendingPathComponent("Content/\(TestServer.Sample.magazine)")
            let version = try #require(
                try FileManager.default.contentsOfDirectory(atPath: installed.path).first, "nothing installed")
            var total: Int64 = 0
            for name in ["cover.pdf", "issue.pdf", "toc.json"] {
                let original = try Data(contentsOf: product.appendingPathComponent("Contents/\(name)"))
                let copy = try Data(contentsOf: installed.appendingPathComponent("\(version)/Contents/\(name)"))
                #expect(copy == original, "\(name)")
                total += Int64(original.count)
            }
            // nginx sent the files (Kiosk may still send a pack of small ones).
            #expect(pair.offloaded.contentBytesSent < total)
        }
    }

    /// A chunked product through nginx with `kiosk get`, then its update (2.0 inserts 1 MiB in the middle of 16):
    /// nginx sends every content byte (the chunk ranges of the download, the new bytes of the update), Kiosk none;
    /// the update reuses what it holds (its last line says so), and both install exact bytes.
    @Test func aChunkedProductAndItsUpdateComeThroughNginx() async throws {
        typealias Support = KioskKitTestSupport
        try await Pair.with { pair in
            let product = "com.example.kiosk.test.nginx-chunks"
            let path = "Contents/level.pak"
            let old = Support.randomData(16 << 20)
            _ = try await Support.publish(product, version: "1.0", files: [path: old], on: pair.offloaded)
            let purchase = try await pair.offloaded.buy(product)
            let cache = pair.offloaded.makeScratchDirectory()
            let command = [
                "get", product, "--receipt", "-", "--server", "http://127.0.0.1:\(pair.nginx.port)", "--cache",
                cache.path,
            ]
            let first = try await ChildProcess.runKiosk(command, input: Data(purchase.receiptData.utf8))
            try #require(first.exitStatus == 0, "\(first)")
            let grant = try await pair.offloaded.grant(product, receipt: purchase.receiptData)
            #expect((grant.files.first?.chunks?.count ?? 0) > 1, "the file is fetched by chunks")

            let new = old.prefix(8 << 20) + Support.randomData(1 << 20) + old.suffix(from: 8 << 20)
            let hashes = try await Support.publish(product, version: "2.0", files: [path: new], on: pair.offloaded)
            let update = try await ChildProcess.runKiosk(command, input: Data(purchase.receiptData.utf8))
            #expect(update.exitStatus == 0, "\(update)")
            let installed = cache.appendingPathComponent("Content/\(product)/2.0/\(path)")
            #expect(try Support.sha256(of: installed) == hashes[path])
            let fetched = update.standardOutput + update.standardError
            #expect(fetched.contains("reused"), "\(update)")
            #expect(pair.offloaded.contentBytesSent == 0, "Kiosk sent no file byte")
        }
    }

    /// The status and error code of a refusal, e.g. `401 token_missing`.
    static func code(_ response: RawHTTPResponse) throws -> String {
        "\(response.status) \(try KioskJSON.decode(APIErrorEnvelope.self, from: response.body).error.code)"
    }
}

import Crypto
import Foundation
import KioskCore
import KioskServer
import Testing

@Suite("Server: purchase, grant and ranged download")
struct ServerDownloadTests {
    private func hex(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    private func errorCode(_ response: RawHTTPResponse) throws -> String {
        try KioskJSON.decode(APIErrorEnvelope.self, from: response.body).error.code
    }

    @Test func buyGrantAndReassembleEveryFileFromRanges() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(TestServer.Sample.levels)
            let grant = try await server.grant(TestServer.Sample.levels, receipt: purchase.receiptData)
            #expect(grant.productID == TestServer.Sample.levels)
            #expect(grant.contentVersion == "1.2")
            #expect(grant.files.count == 10)
            #expect(grant.totalLength == grant.files.reduce(0) { $0 + $1.length })
            #expect(grant.expiresAt > Date())
            for file in grant.files {
                // Three ranged requests (first part, middle, open end) reassemble to the manifest's SHA-256.
                let third = max(file.length / 3, 1)
                var assembled = Data()
                for range in ["bytes=0-\(third - 1)", "bytes=\(third)-\(2 * third - 1)", "bytes=\(2 * third)-"] {
                    let response = try await server.send(
                        "GET", file.url, headers: [("Authorization", "Bearer \(grant.token)"), ("Range", range)])
                    #expect(response.status == 206, "\(file.path) \(range)")
                    assembled.append(response.body)
                }
                #expect(assembled.count == file.length)
                #expect(hex(assembled) == file.sha256, "\(file.path)")
            }
        }
    }

    @Test func contentResponsesCarryEveryContractHeader() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(TestServer.Sample.magazine)
            let grant = try await server.grant(TestServer.Sample.magazine, receipt: purchase.receiptData)
            let file = try #require(grant.files.first { $0.path == "Contents/issue.pdf" })
            let response = try await server.send("GET", file.url + "?token=\(grant.token)")
            #expect(response.status == 200)
            #expect(response.header("ETag") == "\"\(file.sha256)\"")
            #expect(response.header("Accept-Ranges") == "bytes")
            #expect(response.header("Content-Length") == String(file.length))
            #expect(response.header("Cache-Control") == "private")
            #expect(response.header("Content-Type") == "application/pdf")
            let lastModified = try #require(response.header("Last-Modified"))
            #expect(HTTPDate.parse(lastModified) != nil)
            let digest = Data(SHA256.hash(data: response.body)).base64EncodedString()
            #expect(response.header("Repr-Digest") == "sha-256=:\(digest):")
            #expect(hex(response.body) == file.sha256)
        }
    }

    @Test func rangeSemanticsOverTheWire() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(TestServer.Sample.book)
            let grant = try await server.grant(TestServer.Sample.book, receipt: purchase.receiptData)
            let file = try #require(grant.files.first)
            let auth = ("Authorization", "Bearer \(grant.token)")
            let whole = try await server.send("GET", file.url, headers: [auth]).body
            let length = Int64(whole.count)

            let suffix = try await server.send("GET", file.url, headers: [auth, ("Range", "bytes=-100")])
            #expect(suffix.status == 206)
            #expect(suffix.header("Content-Range") == "bytes \(length - 100)-\(length - 1)/\(length)")
            #expect(suffix.body == whole.suffix(100))

            let open = try await server.send("GET", file.url, headers: [auth, ("Range", "bytes=\(length - 10)-")])
            #expect(open.body == whole.suffix(10))

            let clamped = try await server.send("GET", file.url, headers: [auth, ("Range", "bytes=\(length - 5)-\(Int64.max)")])
            #expect(clamped.status == 206)
            #expect(clamped.header("Content-Range") == "bytes \(length - 5)-\(length - 1)/\(length)")

            let unsatisfiable = try await server.send("GET", file.url, headers: [auth, ("Range", "bytes=\(length)-")])
            #expect(unsatisfiable.status == 416)
            #expect(unsatisfiable.header("Content-Range") == "bytes */\(length)")
            #expect(try errorCode(unsatisfiable) == "range_not_satisfiable")

            let garbage = try await server.send("GET", file.url, headers: [auth, ("Range", "bytes=oops")])
            #expect(garbage.status == 200)
            #expect(garbage.body.count == whole.count)

            let matching = try await server.send(
                "GET", file.url, headers: [auth, ("Range", "bytes=0-9"), ("If-Range", "\"\(file.sha256)\"")])
            #expect(matching.status == 206)
            let changed = try await server.send(
                "GET", file.url, headers: [auth, ("Range", "bytes=0-9"), ("If-Range", "\"0000\"")])
            #expect(changed.status == 200)
            let weak = try await server.send(
                "GET", file.url, headers: [auth, ("Range", "bytes=0-9"), ("If-Range", "W/\"\(file.sha256)\"")])
            #expect(weak.status == 200)
            let lastModified = try #require(matching.header("Last-Modified"))
            let byDate = try await server.send(
                "GET", file.url, headers: [auth, ("Range", "bytes=0-9"), ("If-Range", lastModified)])
            #expect(byDate.status == 206)

            let head = try await server.send("HEAD", file.url, headers: [auth, ("Range", "bytes=0-9")])
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == String(length))
            #expect(head.header("ETag") == "\"\(file.sha256)\"")
        }
    }

    @Test func multipleRangesAnswerMultipartByteranges() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(TestServer.Sample.magazine)
            let grant = try await server.grant(TestServer.Sample.magazine, receipt: purchase.receiptData)
            let file = try #require(grant.files.first { $0.path == "Contents/toc.json" })
            let auth = ("Authorization", "Bearer \(grant.token)")
            let whole = try await server.send("GET", file.url, headers: [auth]).body
            let response = try await server.send("GET", file.url, headers: [auth, ("Range", "bytes=0-4, 10-19,-3")])
            #expect(response.status == 206)
            let contentType = try #require(response.header("Content-Type"))
            #expect(contentType.hasPrefix("multipart/byteranges; boundary="))
            #expect(response.header("Content-Length") == String(response.body.count))
            let boundary = String(contentType.split(separator: "=", maxSplits: 1)[1]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            let text = response.text
            #expect(text.hasSuffix("--\(boundary)--\r\n"))
            let length = whole.count
            for (range, bytes) in [
                ("0-4", whole.prefix(5)), ("10-19", whole[10..<20]), ("\(length - 3)-\(length - 1)", whole.suffix(3)),
            ] {
                let part =
                    "Content-Range: bytes \(range)/\(length)\r\n\r\n" + String(decoding: bytes, as: UTF8.self) + "\r\n"
                #expect(text.contains(part), "part \(range)")
            }
            let tooMany = (0..<40).map { "\($0 * 2)-\($0 * 2)" }.joined(separator: ",")
            let capped = try await server.send("GET", file.url, headers: [auth, ("Range", "bytes=" + tooMany)])
            #expect(capped.status == 200)
        }
    }

    @Test func refusals() async throws {
        try await TestServer.with { server in
            let magazine = try await server.buy(TestServer.Sample.magazine, user: "alice")
            let grant = try await server.grant(TestServer.Sample.magazine, receipt: magazine.receiptData)
            let url = try #require(grant.files.first?.url)

            let noToken = try await server.send("GET", url)
            #expect(noToken.status == 401)
            #expect(try errorCode(noToken) == "token_missing")
            #expect(noToken.header("WWW-Authenticate") == "Bearer")

            var tampered = Array(grant.token)
            let index = tampered.index(tampered.startIndex, offsetBy: tampered.count / 2)
            tampered[index] = tampered[index] == "A" ? "B" : "A"
            let forged = try await server.send("GET", url, headers: [("Authorization", "Bearer \(String(tampered))")])
            #expect(forged.status == 401)
            #expect(try errorCode(forged) == "token_invalid")

            // A token for the magazine never opens the book.
            let bookPurchase = try await server.buy(TestServer.Sample.book, user: "bob")
            let bookGrant = try await server.grant(TestServer.Sample.book, receipt: bookPurchase.receiptData)
            let crossed = try await server.send(
                "GET", try #require(bookGrant.files.first?.url), headers: [("Authorization", "Bearer \(grant.token)")])
            #expect(crossed.status == 403)
            #expect(try errorCode(crossed) == "token_scope")

            // Alice's receipt holds the magazine only.
            let notEntitled = try await server.send(
                "POST", "/v1/downloads",
                body: try KioskJSON.encode(
                    GrantRequest(
                        proof: .receipt(magazine.receiptData), productID: TestServer.Sample.book,
                        installationID: TestServer.installationID)))
            #expect(notEntitled.status == 403)
            #expect(try errorCode(notEntitled) == "not_entitled")

            let unknown = try await server.send(
                "POST", "/v1/downloads",
                body: try KioskJSON.encode(
                    GrantRequest(
                        proof: .receipt(magazine.receiptData), productID: "com.example.none",
                        installationID: TestServer.installationID)))
            #expect(unknown.status == 404)

            let noReceipt = try await server.send("POST", "/v1/downloads", body: Data(#"{"product_id":"\#(TestServer.Sample.book)"}"#.utf8))
            #expect(noReceipt.status == 400)
            #expect(try errorCode(noReceipt) == "bad_request")

            let garbage = try await server.send(
                "POST", "/v1/downloads",
                body: try KioskJSON.encode(
                    GrantRequest(
                        proof: .receipt("not base64 at all!"), productID: TestServer.Sample.book,
                        installationID: TestServer.installationID)))
            #expect(garbage.status == 400)
            #expect(try errorCode(garbage) == "receipt_malformed")

            // A receipt whose signed payload was edited: the sandbox store answers 21002, as Apple does.
            let forgedReceipt = Data(base64Encoded: magazine.receiptData).map { data -> String in
                var bytes = [UInt8](data)
                bytes[bytes.count / 2] ^= 0x01
                return Data(bytes).base64EncodedString()
            }
            let tamperedReceipt = try await server.send(
                "POST", "/v1/downloads",
                body: try KioskJSON.encode(
                    GrantRequest(
                        proof: .receipt(try #require(forgedReceipt)), productID: TestServer.Sample.magazine,
                        installationID: TestServer.installationID)))
            #expect(tamperedReceipt.status == 400)
            #expect(try errorCode(tamperedReceipt) == "receipt_malformed")
        }
    }

    @Test func refundStopsFurtherGrants() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(TestServer.Sample.book)
            _ = try await server.grant(TestServer.Sample.book, receipt: purchase.receiptData)
            try await server.refund(purchase.transactionID)
            let refused = try await server.send(
                "POST", "/v1/downloads",
                body: try KioskJSON.encode(
                    GrantRequest(
                        proof: .receipt(purchase.receiptData), productID: TestServer.Sample.book,
                        installationID: TestServer.installationID)))
            #expect(refused.status == 403)
            #expect(try errorCode(refused) == "not_entitled")
            let recorded = try #require(try await server.server.ledger.transaction(id: purchase.transactionID))
            #expect(recorded.cancellationDate != nil)
        }
    }

    @Test func restoreListsWhatTheReceiptEntitles() async throws {
        try await TestServer.with { server in
            _ = try await server.buy(TestServer.Sample.book, user: "carol")
            let last = try await server.buy(TestServer.Sample.subscription, user: "carol")
            let answer = try await server.postJSON(
                "/v1/receipts/verify", ReceiptVerificationRequest(receiptData: last.receiptData), as: EntitlementsResponse.self)
            #expect(answer.environment == "Sandbox")
            #expect(Set(answer.entitlements.map(\.productID)) == [TestServer.Sample.book, TestServer.Sample.subscription])
            let subscription = try #require(answer.entitlements.first { $0.productID == TestServer.Sample.subscription })
            #expect(subscription.expiresDate.map { $0 > Date() } == true)
            #expect(try await server.server.ledger.count() == 2)
        }
    }

    @Test func oldVersionIsGoneAfterAnUpdate() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(TestServer.Sample.magazine)
            let grant = try await server.grant(TestServer.Sample.magazine, receipt: purchase.receiptData)
            let info = server.contentDirectory.appendingPathComponent("\(TestServer.Sample.magazine)/Info.json")
            let text = try String(contentsOf: info, encoding: .utf8).replacingOccurrences(of: "\"1.0\"", with: "\"1.1\"")
            try Data(text.utf8).write(to: info)
            await server.reloadCatalog()
            let gone = try await server.send(
                "GET", try #require(grant.files.first?.url), headers: [("Authorization", "Bearer \(grant.token)")])
            #expect(gone.status == 410)
            #expect(try errorCode(gone) == "version_gone")
            let renewed = try await server.grant(TestServer.Sample.magazine, receipt: purchase.receiptData)
            #expect(renewed.contentVersion == "1.1")
        }
    }

    @Test func expiredTokensAreRefused() async throws {
        let clock = TestServer.manualClock()
        try await TestServer.with(configure: {
            $0.grantLifetime = .seconds(1)
            $0.clock = clock
        }) { server in
            let purchase = try await server.buy(TestServer.Sample.book)
            let grant = try await server.grant(TestServer.Sample.book, receipt: purchase.receiptData)
            clock.advance(by: 2.1)
            let expired = try await server.send(
                "GET", try #require(grant.files.first?.url), headers: [("Authorization", "Bearer \(grant.token)")])
            #expect(expired.status == 401)
            #expect(try errorCode(expired) == "token_expired")
        }
    }
}

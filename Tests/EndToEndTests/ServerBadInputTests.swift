import Foundation
import KioskCore
import Testing

/// Bad input never crashes the server nor yields a 5xx it did not mean.
@Suite("Server: bad input")
struct ServerBadInputTests {
    @Test func malformedBodies() async throws {
        try await TestServer.with { server in
            for body in ["", "{", "[]", "null", #"{"receipt-data": 5, "product_id": 5, "transaction_id": 5}"#, "\u{0}\u{1}garbage"] {
                for path in [
                    "/v1/downloads", "/v1/receipts/verify", "/sandbox/purchases", "/sandbox/refunds",
                    "/v1/notifications/appstore", "/sandbox/notifications",
                ] {
                    let response = try await server.send("POST", path, body: Data(body.utf8))
                    #expect(response.status == 400, "\(path) with \(body.debugDescription)")
                    #expect(try KioskJSON.decode(APIErrorEnvelope.self, from: response.body).error.code == "bad_request")
                }
            }
            let verify = try await server.send("POST", "/sandbox/verifyReceipt", body: Data("{".utf8))
            #expect(verify.status == 200)
            #expect(verify.text.contains("21000"))
        }
    }

    @Test func hugeBodiesAre413() async throws {
        try await TestServer.with { server in
            let big = Data(repeating: UInt8(ascii: "a"), count: 5 * 1024 * 1024)
            let response = try await server.send("POST", "/v1/downloads", body: big)
            #expect(response.status == 413)
            let announced = try await server.send(
                "POST", "/sandbox/purchases", headers: [("Content-Length", "999999999")], body: Data("{}".utf8))
            #expect(announced.status == 413)
            let health = try await server.send("GET", "/healthz")
            #expect(health.status == 200)
        }
    }

    @Test func pathTraversalIsRefused() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(TestServer.Sample.magazine)
            let grant = try await server.grant(TestServer.Sample.magazine, receipt: purchase.receiptData)
            let base = "/v1/content/\(TestServer.Sample.magazine)/1.0/"
            for path in [
                "Contents/../Info.json", "Contents/%2e%2e/Info.json", "Contents/%2E%2E/%2E%2E/book/Info.json",
                "..%2f..%2fetc%2fpasswd", "Contents%2f..%2fInfo.json", "Contents/./issue.pdf", "Contents//issue.pdf",
                "Contents/issue.pdf%00.txt", "Info.json", "%2e%2e/%2e%2e/%2e%2e/etc/passwd",
            ] {
                let response = try await server.send("GET", base + path, headers: [("Authorization", "Bearer \(grant.token)")])
                #expect([400, 404].contains(response.status), "\(path) answered \(response.status)")
                #expect(!response.text.contains("product_id"), "\(path) leaked Info.json")
            }
        }
    }

    @Test func garbageRangeHeadersServeTheWholeFile() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(TestServer.Sample.magazine)
            let grant = try await server.grant(TestServer.Sample.magazine, receipt: purchase.receiptData)
            let file = try #require(grant.files.first { $0.path == "Contents/toc.json" })
            for range in [
                "bytes=", "bytes=-", "bytes=5-1", "bytes=abc", "items=0-1", "bytes=0-1;2-3", "bytes=--1",
                "bytes=99999999999999999999999999-", String(repeating: "bytes=0-1,", count: 2000),
                "bytes=0x10-0x20",
            ] {
                let response = try await server.send(
                    "GET", file.url, headers: [("Authorization", "Bearer \(grant.token)"), ("Range", range)])
                #expect([200, 416].contains(response.status), "\(range.prefix(40)) answered \(response.status)")
                #expect(response.status < 500)
            }
            // A control character is not even a valid header: the HTTP parser answers 400 and closes.
            let control = try await server.send(
                "GET", file.url, headers: [("Authorization", "Bearer \(grant.token)"), ("Range", "bytes=\u{7F}")])
            #expect(control.status == 400)
            #expect(try await server.send("GET", "/healthz").status == 200)
        }
    }

    @Test func tamperedAndOddTokens() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(TestServer.Sample.book)
            let grant = try await server.grant(TestServer.Sample.book, receipt: purchase.receiptData)
            let url = try #require(grant.files.first?.url)
            for token in ["", "x", "v1...", "v1.a.b.c", grant.token + "x", String(grant.token.dropLast()),
                          String(repeating: "A", count: 5000), "v2" + grant.token.dropFirst(2)] {
                let response = try await server.send("GET", url, headers: [("Authorization", "Bearer \(token)")])
                #expect(response.status == 401, "\(token.prefix(20))")
            }
            let basic = try await server.send("GET", url, headers: [("Authorization", "Basic Zm9vOmJhcg==")])
            #expect(basic.status == 401)
        }
    }

    @Test func wrongMethodsAndUnknownProducts() async throws {
        try await TestServer.with { server in
            let put = try await server.send("PUT", "/v1/products", body: Data("{}".utf8))
            #expect([404, 405].contains(put.status))
            let purchase = try await server.send(
                "POST", "/sandbox/purchases", body: try KioskJSON.encode(SandboxPurchaseRequest(productID: "com.example.none")))
            #expect(purchase.status == 404)
            let quantity = try await server.send(
                "POST", "/sandbox/purchases",
                body: try KioskJSON.encode(SandboxPurchaseRequest(productID: TestServer.Sample.book, quantity: 3)))
            #expect(quantity.status == 400)
        }
    }
}

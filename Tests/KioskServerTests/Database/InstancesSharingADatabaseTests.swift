import AsyncHTTPClient
import Foundation
import KioskCore
import KioskServerTestSupport
import NIOHTTP1
import Testing

@testable import KioskServer

/// Three `kiosk serve` instances sharing one database and one grant secret behave as one service (#30): a sandbox
/// purchase made at A is granted at B, B's token opens the content at C, and a refund notification processed at A
/// stops that token at C. On PostgreSQL (woken by `NOTIFY`) and on one SQLite file shared by the instances (polled).
@Suite("Instances sharing a database")
struct InstancesSharingADatabaseTests {
    static let product = "com.example.shared.issue"

    /// Starts `count` servers on `url` with one grant secret and one catalog, runs `body` with their ports, and
    /// stops them.
    static func withInstances(
        _ count: Int, on url: DatabaseURL, databaseWait: Duration = TestDatabase.connectionWait,
        _ body: ([Int]) async throws -> Void
    ) async throws {
        let content = try ServerTestDirectory("shared-content")
        try content.writeProduct(
            id: product, files: ["Contents/issue.pdf": Data(repeating: 0x42, count: 64 << 10)])
        // Kept until the end: a folder is removed when its value is released.
        let folders = try (0..<count).map { try ServerTestDirectory("shared-data-\($0)") }
        var instances: [LiveKioskServer] = []
        do {
            for folder in folders {
                var configuration = ServerConfiguration.forTests(content: content.url, data: folder.url)
                configuration.database = url
                configuration.databaseWait = databaseWait
                configuration.grantSecret = "a grant secret the instances share, long enough to be one"
                instances.append(
                    try await LiveKioskServer.start(configuration: configuration, logger: LogRecorder().logger))
            }
            try await body(instances.map(\.port))
        } catch {
            for instance in instances { await instance.stop() }
            throw error
        }
        for instance in instances { await instance.stop() }
        withExtendedLifetime(folders) {}
    }

    /// Sends `method target` to the instance on `port` with a JSON body; its status and body.
    static func send(
        _ port: Int, _ method: HTTPMethod, _ target: String, json: (any Encodable)? = nil,
        headers: [(String, String)] = []
    ) async throws -> (status: Int, body: Data) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(target)")
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(try KioskJSON.encode(json))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        return (Int(response.status.code), Data(buffer: try await response.body.collect(upTo: 1 << 20)))
    }

    @Test(arguments: TestDatabase.engines)
    func aPurchaseAtOneIsGrantedAtAnotherAndARefundStopsItsTokenAtTheThird(
        engine: KioskDatabase.Engine
    ) async throws {
        try await TestDatabase.withURL(engine) { url in
            try await Self.withInstances(3, on: url) { ports in
                let (a, b, c) = (ports[0], ports[1], ports[2])
                let bought = try await Self.send(
                    a, .POST, "/sandbox/purchases", json: SandboxPurchaseRequest(productID: Self.product))
                #expect(bought.status == 201)
                let purchase = try KioskJSON.decode(SandboxPurchaseResponse.self, from: bought.body)

                // The receipt A issued is valid at B (one receipt key), and so is its signed transaction (one chain).
                for proof in [PurchaseProof.receipt(purchase.receiptData), .signedTransaction(
                    try #require(purchase.signedTransaction))]
                {
                    let answer = try await Self.send(
                        b, .POST, "/v1/downloads",
                        json: GrantRequest(proof: proof, productID: Self.product, installationID: "device-1"))
                    #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
                }
                let granted = try await Self.send(
                    b, .POST, "/v1/downloads",
                    json: GrantRequest(
                        proof: .receipt(purchase.receiptData), productID: Self.product, installationID: "device-1"))
                let grant = try KioskJSON.decode(Grant.self, from: granted.body)
                let file = try #require(grant.files.first)
                let path = try #require(URL(string: file.url)).path
                let bearer = [("Authorization", "Bearer \(grant.token)")]
                #expect(try await Self.send(c, .GET, path, headers: bearer).status == 200)

                // A processes the refund; C refuses the live token once it has followed.
                let refunded = try await Self.send(
                    a, .POST, "/sandbox/notifications",
                    json: SandboxNotificationRequest(transactionID: purchase.transactionID, kind: .refund))
                #expect(refunded.status == 200)
                let start = ContinuousClock.now
                var status = 200
                for _ in 0..<200 where status == 200 {
                    status = try await Self.send(c, .GET, path, headers: bearer).status
                    if status == 200 { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(status == 403, "the refund at A never reached C")
                print("refund at A to refusal at C (\(engine)): \(ContinuousClock.now - start)")
            }
        }
    }
}

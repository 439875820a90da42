import Foundation
import KioskCore
import KioskServer
import Testing

/// The server in `appstore` mode, against a fake store that answers each status code of Apple's contract.
@Suite("Server: appstore mode against a fake store")
struct AppStoreModeTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var scenario: String
        var status: Int
        var code: String?
        var testDescription: String { scenario }
    }

    static let cases: [Case] = [
        Case(scenario: "ok", status: 200, code: nil),
        Case(scenario: "sandbox-receipt", status: 200, code: nil),
        Case(scenario: "ios6", status: 200, code: nil),
        Case(scenario: "other-bundle", status: 403, code: "receipt_invalid"),
        Case(scenario: "refunded", status: 403, code: "not_entitled"),
        Case(scenario: "status-21000", status: 500, code: "store_misconfigured"),
        Case(scenario: "status-21002", status: 400, code: "receipt_malformed"),
        Case(scenario: "status-21003", status: 403, code: "receipt_invalid"),
        Case(scenario: "status-21004", status: 500, code: "store_misconfigured"),
        Case(scenario: "status-21010", status: 403, code: "receipt_invalid"),
        Case(scenario: "retryable", status: 503, code: "store_unavailable"),
        Case(scenario: "http500", status: 503, code: "store_unavailable"),
    ]

    @Test(arguments: cases)
    func answersEachStoreStatus(_ testCase: Case) async throws {
        try await FakeAppStore.with(bundleID: Self.bundleID, productID: TestServer.Sample.book) { store in
            try await TestServer.with(configure: { Self.useAppStore(store, &$0) }) { server in
                try await check(testCase, server: server, store: store)
            }
        }
    }

    private func check(_ testCase: Case, server: TestServer, store: FakeAppStore) async throws {
        let response = try await server.send(
            "POST", "/v1/downloads",
            body: try KioskJSON.encode(
                GrantRequest(
                    proof: .receipt(FakeAppStore.receipt(testCase.scenario)), productID: TestServer.Sample.book,
                    installationID: TestServer.installationID)))
        #expect(response.status == testCase.status, "\(response.text)")
        if let code = testCase.code {
            let envelope = try KioskJSON.decode(APIErrorEnvelope.self, from: response.body)
            #expect(envelope.error.code == code)
            #expect(!envelope.error.message.isEmpty)
            if code == "store_unavailable" { #expect(response.header("Retry-After").flatMap(Int.init) ?? 0 >= 1) }
        } else {
            let grant = try KioskJSON.decode(Grant.self, from: response.body)
            #expect(grant.files.count == 1)
        }
        let log = store.callLog
        #expect(log.first == "production:app-shared-secret", "production is always asked first")
        if testCase.scenario == "sandbox-receipt" { #expect(log == ["production:app-shared-secret", "sandbox:app-shared-secret"]) }
        if testCase.scenario == "status-21002" { #expect(log.count == 2 && log[1].hasPrefix("sandbox")) }
        if testCase.scenario == "retryable" || testCase.scenario == "http500" { #expect(log.count == 4) }
    }

    @Test func sandboxEndpointsAreAbsentInAppStoreMode() async throws {
        try await TestServer.with(configure: {
            $0.store = .appstore
            $0.bundleID = Self.bundleID
        }) { server in
            let response = try await server.send(
                "POST", "/sandbox/purchases",
                body: try KioskJSON.encode(SandboxPurchaseRequest(productID: TestServer.Sample.book)))
            #expect(response.status == 404)
        }
    }

    @Test func oversizedReceiptIsRefusedBeforeAnyStoreCall() async throws {
        try await FakeAppStore.with(bundleID: Self.bundleID, productID: TestServer.Sample.book) { store in
            try await TestServer.with(configure: { Self.useAppStore(store, &$0) }) { server in
                let huge = String(repeating: "A", count: 3 * 1024 * 1024 + 4)
                let response = try await server.send(
                    "POST", "/v1/downloads",
                    body: try KioskJSON.encode(
                        GrantRequest(
                            proof: .receipt(huge), productID: TestServer.Sample.book,
                            installationID: TestServer.installationID)))
                #expect(response.status == 413)
                #expect(try KioskJSON.decode(APIErrorEnvelope.self, from: response.body).error.code == "payload_too_large")
                #expect(store.callLog.isEmpty)
            }
        }
    }

    @Test func sandboxReceiptIsRefusedWhereOnlyProductionIsAccepted() async throws {
        try await FakeAppStore.with(bundleID: Self.bundleID, productID: TestServer.Sample.book) { store in
            try await TestServer.with(configure: {
                Self.useAppStore(store, &$0)
                $0.transactionEnvironments = ["Production"]
            }) { server in
                let receipt = FakeAppStore.receipt("sandbox-receipt")
                // Twice each: the second must not be answered from the receipt cache either.
                for _ in 0..<2 {
                    let grant = try await server.post(
                        "/v1/downloads",
                        GrantRequest(proof: .receipt(receipt), productID: TestServer.Sample.book, installationID: "one")
                    )
                    let verify = try await server.post(
                        "/v1/receipts/verify", ReceiptVerificationRequest(receiptData: receipt))
                    for response in [grant, verify] {
                        #expect(response.status == 403, "\(response.text)")
                        let envelope = try KioskJSON.decode(APIErrorEnvelope.self, from: response.body)
                        #expect(envelope.error.code == "receipt_invalid")
                        #expect(envelope.error.reason == "environment")
                    }
                }
                #expect(
                    try await server.server.ledger.count() == 0, "a refused receipt left transactions in the ledger")
            }
        }
    }

    @Test func storeRedirectsAreNotFollowed() async throws {
        try await FakeAppStore.with(bundleID: Self.bundleID, productID: TestServer.Sample.book) { elsewhere in
            try await FakeAppStore.with(bundleID: Self.bundleID, productID: TestServer.Sample.book) { store in
                try await TestServer.with(configure: { Self.useAppStore(store, &$0) }) { server in
                    let response = try await server.post(
                        "/v1/downloads",
                        GrantRequest(
                            proof: .receipt(FakeAppStore.receipt("redirect-\(elsewhere.port)")),
                            productID: TestServer.Sample.book, installationID: "one"))
                    #expect(
                        elsewhere.callLog.isEmpty, "the receipt and shared secret followed a redirect to another origin"
                    )
                    #expect(response.status == 500, "\(response.text)")
                    #expect(
                        try KioskJSON.decode(APIErrorEnvelope.self, from: response.body).error.code
                            == "store_misconfigured")
                }
            }
        }
    }

    /// The bundle ID of the app these tests stand for (not the example one, which appstore mode refuses).
    static let bundleID = "com.acme.newsstand"

    /// Points the server at `store` in appstore mode, for the app ``bundleID``, with a shared secret.
    static func useAppStore(_ store: FakeAppStore, _ configuration: inout ServerConfiguration) {
        configuration.store = .appstore
        configuration.bundleID = bundleID
        configuration.productionVerifyURL = store.productionURL
        configuration.sandboxVerifyURL = store.sandboxURL
        configuration.sharedSecret = "app-shared-secret"
    }
}

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
        try await FakeAppStore.with(bundleID: "com.example.kiosk", productID: TestServer.Sample.book) { store in
            try await TestServer.with(configure: {
                $0.store = .appstore
                $0.productionVerifyURL = store.productionURL
                $0.sandboxVerifyURL = store.sandboxURL
                $0.sharedSecret = "app-shared-secret"
            }) { server in
                try await check(testCase, server: server, store: store)
            }
        }
    }

    private func check(_ testCase: Case, server: TestServer, store: FakeAppStore) async throws {
        let response = try await server.send(
            "POST", "/v1/downloads",
            body: try KioskJSON.encode(
                GrantRequest(receiptData: FakeAppStore.receipt(testCase.scenario), productID: TestServer.Sample.book)))
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
        try await TestServer.with(configure: { $0.store = .appstore }) { server in
            let response = try await server.send(
                "POST", "/sandbox/purchases",
                body: try KioskJSON.encode(SandboxPurchaseRequest(productID: TestServer.Sample.book)))
            #expect(response.status == 404)
        }
    }

    @Test func oversizedReceiptIsRefusedBeforeAnyStoreCall() async throws {
        try await FakeAppStore.with(bundleID: "com.example.kiosk", productID: TestServer.Sample.book) { store in
            try await TestServer.with(configure: {
                $0.store = .appstore
                $0.productionVerifyURL = store.productionURL
                $0.sandboxVerifyURL = store.sandboxURL
            }) { server in
                let huge = String(repeating: "A", count: 3 * 1024 * 1024 + 4)
                let response = try await server.send(
                    "POST", "/v1/downloads",
                    body: try KioskJSON.encode(GrantRequest(receiptData: huge, productID: TestServer.Sample.book)))
                #expect(response.status == 413)
                #expect(try KioskJSON.decode(APIErrorEnvelope.self, from: response.body).error.code == "payload_too_large")
                #expect(store.callLog.isEmpty)
            }
        }
    }
}

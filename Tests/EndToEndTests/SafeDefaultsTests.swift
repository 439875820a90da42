import Foundation
import KioskCore
import KioskServer
import Testing

/// The defaults a deployment meets first: where the free sandbox store may listen, which App Store setups start,
/// the installation cap, and the modes of the data folder.
@Suite("Server: safe defaults")
struct SafeDefaultsTests {
    @Test func sandboxStoreOnAPublicAddressIsRefusedWithoutTheOptIn() async throws {
        await #expect(throws: ServerConfigurationError.self) {
            try await TestServer.with(configure: { $0.host = "0.0.0.0" }) { _ in }
        }
    }

    @Test func sandboxStoreOnAPublicAddressIsServedWithTheOptIn() async throws {
        // Bound to every interface; the test's own traffic still goes to 127.0.0.1 only.
        try await TestServer.with(configure: {
            $0.host = "0.0.0.0"
            $0.allowPublicSandbox = true
        }) { server in
            let purchase = try await server.buy(TestServer.Sample.book)
            let grant = try await server.grant(TestServer.Sample.book, proof: .receipt(purchase.receiptData))
            #expect(grant.productID == TestServer.Sample.book)
        }
    }

    @Test func appStoreModeWithTheExampleBundleIDIsRefused() async throws {
        await #expect(throws: ServerConfigurationError.self) {
            try await TestServer.with(configure: { $0.store = .appstore }) { _ in }
        }
        try await TestServer.with(configure: {
            $0.store = .appstore
            $0.bundleID = AppStoreModeTests.bundleID
        }) { server in
            let response = try await server.send("GET", "/healthz")
            #expect(response.status == 200)
        }
    }

    @Test func metricsAreServedToLoopbackClients() async throws {
        // Other peers get 404 unless --public-metrics; only loopback traffic is sent here, so the peer check
        // itself is covered by LoopbackAddressTests.
        try await TestServer.with { server in
            let response = try await server.send("GET", "/metrics")
            #expect(response.status == 200)
        }
    }

    @Test func installationCapHoldsWithAndWithoutInstallationID() async throws {
        try await TestServer.with(configure: { $0.maxInstallations = 2 }) { server in
            let purchase = try await server.buy(TestServer.Sample.book)
            for installation in ["phone", "tablet"] {
                _ = try await server.grant(
                    TestServer.Sample.book, proof: .receipt(purchase.receiptData), installationID: installation)
            }
            let third = try await server.post(
                "/v1/downloads",
                GrantRequest(
                    proof: .receipt(purchase.receiptData), productID: TestServer.Sample.book, installationID: "laptop"))
            #expect(third.status == 403)
            #expect(try KioskJSON.decode(APIErrorEnvelope.self, from: third.body).error.code == "installation_limit")
            for _ in 0..<3 {
                let anonymous = try await server.post(
                    "/v1/downloads",
                    GrantRequest(proof: .receipt(purchase.receiptData), productID: TestServer.Sample.book))
                #expect(anonymous.status == 400, "a grant without installation_id was admitted past the cap")
                #expect(try KioskJSON.decode(APIErrorEnvelope.self, from: anonymous.body).error.code == "bad_request")
            }
        }
    }

    @Test func dataFolderAndLedgerAreOwnerOnly() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(TestServer.Sample.book)
            _ = try await server.grant(
                TestServer.Sample.book, proof: .receipt(purchase.receiptData), installationID: "one")
            try expectOwnerOnly(server.dataDirectory)
        }
    }

    @Test func anExistingDataFolderIsTightenedAtStart() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-modes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        try FileManager.default.createDirectory(
            at: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        // A ledger left by an older release, readable by everyone.
        _ = FileManager.default.createFile(
            atPath: data.appendingPathComponent("kiosk.sqlite").path, contents: nil,
            attributes: [.posixPermissions: 0o644])
        try await TestServer.with(configure: { $0.dataDirectory = data }) { server in
            _ = try await server.buy(TestServer.Sample.book)
            try expectOwnerOnly(data)
        }
    }

    /// The folder is 0700 and every file in it has no group or other permission bits.
    private func expectOwnerOnly(_ folder: URL) throws {
        let manager = FileManager.default
        let folderMode = try #require(manager.attributesOfItem(atPath: folder.path)[.posixPermissions] as? Int)
        #expect(folderMode == 0o700, "data folder mode \(String(folderMode, radix: 8))")
        let names = try manager.contentsOfDirectory(atPath: folder.path)
        #expect(names.contains("kiosk.sqlite"))
        for name in names {
            let mode = try #require(
                manager.attributesOfItem(atPath: folder.appendingPathComponent(name).path)[.posixPermissions] as? Int)
            #expect(mode & 0o077 == 0, "\(name) mode \(String(mode, radix: 8))")
        }
    }
}

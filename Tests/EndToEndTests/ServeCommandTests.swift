import Foundation
import KioskCore
import Testing

/// The `kiosk serve` binary itself, started as an operator would.
@Suite("kiosk serve: options, environment and defaults", .timeLimit(.minutes(2)))
struct ServeCommandTests {
    @Test func anOptionWinsOverItsEnvironmentVariable() async throws {
        // The reproduction: KIOSK_MAX_INSTALLATIONS=3 kiosk serve --max-installations 5 served 3.
        try await ServeProcess.with(
            arguments: ["--max-installations", "5"], environment: ["KIOSK_MAX_INSTALLATIONS": "3"]
        ) { server in
            let purchase = try await server.buy(TestServer.Sample.book)
            for installation in 1...5 {
                _ = try await server.grant(
                    TestServer.Sample.book, proof: .receipt(purchase.receiptData),
                    installationID: "installation-\(installation)")
            }
            let sixth = try await server.post(
                "/v1/downloads",
                GrantRequest(
                    proof: .receipt(purchase.receiptData), productID: TestServer.Sample.book,
                    installationID: "installation-6"))
            #expect(sixth.status == 403)
            #expect(try KioskJSON.decode(APIErrorEnvelope.self, from: sixth.body).error.code == "installation_limit")
        }
    }
}

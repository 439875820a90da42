import Foundation
import KioskCore
import Testing

@Suite("Server: request IDs and metrics")
struct ServerObservabilityTests {
    @Test func requestIDsAreEchoedOrGenerated() async throws {
        try await TestServer.with { server in
            let echoed = try await server.send("GET", "/healthz", headers: [("X-Request-ID", "app-42.retry:1_x")])
            #expect(echoed.header("X-Request-ID") == "app-42.retry:1_x")
            let generated = try #require(try await server.send("GET", "/healthz").header("X-Request-ID"))
            #expect(!generated.isEmpty)
            for hostile in ["a b", String(repeating: "x", count: 65), "<script>", "é"] {
                let replaced = try await server.send("GET", "/healthz", headers: [("X-Request-ID", hostile)])
                let id = try #require(replaced.header("X-Request-ID"))
                #expect(id != hostile)
                #expect(!id.isEmpty && id.count <= 64)
            }
            // Errors carry the ID too.
            let missing = try await server.send("GET", "/nowhere", headers: [("X-Request-ID", "lost-1")])
            #expect(missing.status == 404)
            #expect(missing.header("X-Request-ID") == "lost-1")
        }
    }

    @Test func metricsCoverWhatAnOperatorWatches() async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(TestServer.Sample.book)
            let grant = try await server.grant(TestServer.Sample.book, receipt: purchase.receiptData)
            _ = try await server.grant(TestServer.Sample.book, receipt: purchase.receiptData)
            _ = try await server.send(
                "POST", "/v1/downloads", headers: [("Content-Type", "application/json")],
                body: try KioskJSON.encode(
                    GrantRequest(
                        proof: .receipt(purchase.receiptData), productID: TestServer.Sample.magazine,
                        installationID: TestServer.installationID)))
            let file = try #require(grant.files.first)
            _ = try await server.send("GET", file.url, headers: [("Authorization", "Bearer \(grant.token)")])
            _ = try await server.send("GET", "/nowhere")
            let text = try await server.send("GET", "/metrics").text
            #expect(!text.contains("NotFound"), "unknown paths are labelled as the README says")
            for series in [
                "kiosk_content_bytes_sent_total", "kiosk_content_active_streams",
                "kiosk_http_requests_total{method=\"GET\",route=\"/v1/content/**\",status=\"200\"}",
                "kiosk_grants_issued_total", "kiosk_grants_refused_total{reason=\"not_entitled\"}",
                "kiosk_store_verifications_total{environment=\"Production\",status=\"21007\"}",
                "kiosk_store_verifications_total{environment=\"Sandbox\",status=\"0\"}",
                "kiosk_store_verification_duration_seconds", "kiosk_receipt_cache_hits",
                "kiosk_http_request_duration_seconds",
                "kiosk_http_requests_total{method=\"GET\",route=\"unmatched\",status=\"404\"}",
            ] {
                #expect(text.contains(series), "\(series)")
            }
        }
    }
}

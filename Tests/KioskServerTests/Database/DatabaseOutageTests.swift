import Foundation
import KioskCore
import KioskServerTestSupport
import NIOHTTP1
import Testing

@testable import KioskServer

/// A server on PostgreSQL while its database stops taking connections (#30): a request that needs the database is
/// refused with 503 `database_unavailable` and `Retry-After` after a bounded wait for a connection, instead of hanging
/// until its client gives up; a download with a grant already issued goes on (tokens and revocations are checked in
/// memory); and everything works again once the database is back.
@Suite("Database outage")
struct DatabaseOutageTests {
    typealias Instances = InstancesSharingADatabaseTests

    @Test(.enabled(if: TestDatabase.isPostgresConfigured, "KIOSK_TEST_POSTGRES_URL not set: needs PostgreSQL"))
    func requestsNeedingTheDatabaseAreRefusedQuicklyAndDownloadsGoOn() async throws {
        try await TestDatabase.withURL(.postgres) { url in
            guard case .postgres(let database) = url.location else { return }
            let server = try TestDatabase.postgresServer()
            try await Instances.withInstances(1, on: url, databaseWait: KioskDatabase.defaultConnectionWait) { ports in
                let port = ports[0]
                let purchase = try KioskJSON.decode(
                    SandboxPurchaseResponse.self,
                    from: try await Instances.send(
                        port, .POST, "/sandbox/purchases", json: SandboxPurchaseRequest(productID: Instances.product)
                    ).body)
                let request = GrantRequest(
                    proof: .receipt(purchase.receiptData), productID: Instances.product, installationID: "device-1")
                let grant = try KioskJSON.decode(
                    Grant.self, from: try await Instances.send(port, .POST, "/v1/downloads", json: request).body)
                let file = try #require(grant.files.first)
                let path = try #require(URL(string: file.url)).path
                let bearer = [("Authorization", "Bearer \(grant.token)")]

                try await TestDatabase.administer(
                    server, "ALTER DATABASE \(database.database) WITH ALLOW_CONNECTIONS false")
                try await TestDatabase.administer(
                    server,
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database.database)'")

                // The client's own timeout (60 s) is far beyond the server's wait: a 503 shows the wait was bounded.
                let refused = try await Instances.send(
                    port, .POST, "/sandbox/purchases", json: SandboxPurchaseRequest(productID: Instances.product))
                #expect(refused.status == 503)
                let envelope = try KioskJSON.decode(APIErrorEnvelope.self, from: refused.body)
                #expect(envelope.error.code == "database_unavailable")
                let text = String(decoding: refused.body, as: UTF8.self)
                #expect(!text.contains(database.database) && !text.contains(server.password ?? "\u{0}"))
                #expect(try await Instances.send(port, .GET, path, headers: bearer).status == 200)

                try await TestDatabase.administer(
                    server, "ALTER DATABASE \(database.database) WITH ALLOW_CONNECTIONS true")
                var status = 0
                for _ in 0..<60 where status != 200 {
                    status = try await Instances.send(port, .POST, "/v1/downloads", json: request).status
                    if status != 200 { try await Task.sleep(for: .milliseconds(250)) }
                }
                #expect(status == 200, "the grant never worked again once the database was back")
            }
        }
    }
}

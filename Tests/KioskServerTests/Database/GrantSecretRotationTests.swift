import Foundation
import KioskCore
import KioskServerTestSupport
import NIOHTTP1
import Testing

@testable import KioskServer

/// The README's rotation of the grant secret across a cluster ("Deploying"), step by step on two instances sharing
/// a database, restarted in turn: at no step is a live token refused by either instance, and only once the old key
/// is dropped are its tokens refused.
@Suite("Grant secret rotation across instances")
struct GrantSecretRotationTests {
    typealias Instances = InstancesSharingADatabaseTests
    static let old = (id: "k2026a", secret: "the-old-grant-secret-of-32-bytes-or-more")
    static let new = (id: "k2026b", secret: "the-new-grant-secret-of-32-bytes-or-more")

    /// One instance: its data folder outlives its restarts.
    final class Instance: Sendable {
        let data: ServerTestDirectory
        let content: URL
        let database: DatabaseURL

        init(content: URL, database: DatabaseURL) throws {
            self.data = try ServerTestDirectory("rotation-data")
            self.content = content
            self.database = database
        }

        /// Starts it signing with `signing` and also accepting `accepting`.
        func start(
            signing: (id: String, secret: String), accepting: (id: String, secret: String)?
        ) async throws -> LiveKioskServer {
            var configuration = ServerConfiguration.forTests(content: content, data: data.url)
            configuration.database = database
            configuration.grantSecret = signing.secret
            configuration.grantKeyID = signing.id
            configuration.previousGrantKeys = accepting.map { "\($0.id):\($0.secret)" }
            return try await LiveKioskServer.start(configuration: configuration, logger: LogRecorder().logger)
        }
    }

    /// Whether `token` opens `path` at the server on `port`.
    static func opens(_ port: Int, _ path: String, _ token: String) async throws -> Bool {
        try await Instances.send(port, .GET, path, headers: [("Authorization", "Bearer \(token)")]).status == 200
    }

    /// A grant from the server on `port`: its token and its file's path.
    static func grant(_ port: Int, receipt: String) async throws -> (token: String, path: String) {
        let answer = try await Instances.send(
            port, .POST, "/v1/downloads",
            json: GrantRequest(proof: .receipt(receipt), productID: Instances.product, installationID: "device-1"))
        let grant = try KioskJSON.decode(Grant.self, from: answer.body)
        let file = try #require(grant.files.first)
        return (grant.token, try #require(URL(string: file.url)).path)
    }

    @Test(arguments: TestDatabase.engines)
    func noTokenIsRefusedWhileTheSecretRotates(engine: KioskDatabase.Engine) async throws {
        try await TestDatabase.withURL(engine) { url in
            let content = try ServerTestDirectory("rotation-content")
            try content.writeProduct(id: Instances.product, files: ["Contents/issue.pdf": Data("issue".utf8)])
            let a = try Instance(content: content.url, database: url)
            let b = try Instance(content: content.url, database: url)
            var liveA = try await a.start(signing: Self.old, accepting: nil)
            var liveB = try await b.start(signing: Self.old, accepting: nil)
            do {
                let bought = try KioskJSON.decode(
                    SandboxPurchaseResponse.self,
                    from: try await Instances.send(
                        liveA.port, .POST, "/sandbox/purchases",
                        json: SandboxPurchaseRequest(productID: Instances.product)
                    ).body)
                var tokens = [try await Self.grant(liveA.port, receipt: bought.receiptData)]
                /// Every token issued so far opens the file at both instances.
                func expectAllOpen(_ step: String) async throws {
                    for (token, path) in tokens {
                        #expect(try await Self.opens(liveA.port, path, token), "\(step): A refused a token")
                        #expect(try await Self.opens(liveB.port, path, token), "\(step): B refused a token")
                    }
                }
                // (1) Every instance accepts the new key before any signs with it, restarted in turn.
                for step1 in ["A", "B"] {
                    if step1 == "A" {
                        await liveA.stop()
                        liveA = try await a.start(signing: Self.old, accepting: Self.new)
                    } else {
                        await liveB.stop()
                        liveB = try await b.start(signing: Self.old, accepting: Self.new)
                    }
                    try await expectAllOpen("step 1, \(step1) restarted")
                }
                // (2) The new key signs, the old one is accepted, restarted in turn: tokens of both keys meanwhile.
                await liveA.stop()
                liveA = try await a.start(signing: Self.new, accepting: Self.old)
                tokens.append(try await Self.grant(liveA.port, receipt: bought.receiptData))
                tokens.append(try await Self.grant(liveB.port, receipt: bought.receiptData))
                try await expectAllOpen("step 2, A restarted")
                await liveB.stop()
                liveB = try await b.start(signing: Self.new, accepting: Self.old)
                try await expectAllOpen("step 2, B restarted")

                // (3) Once the grant lifetime has passed, the old key goes: its tokens are refused, the new ones open.
                let fresh = try await Self.grant(liveA.port, receipt: bought.receiptData)
                await liveA.stop()
                liveA = try await a.start(signing: Self.new, accepting: nil)
                #expect(try await Self.opens(liveA.port, fresh.path, fresh.token))
                #expect(!(try await Self.opens(liveA.port, tokens[0].path, tokens[0].token)), "the old key was dropped")
            } catch {
                await liveA.stop()
                await liveB.stop()
                throw error
            }
            await liveA.stop()
            await liveB.stop()
        }
    }
}

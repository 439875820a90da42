import Foundation
import KioskCore
import KioskServer
import Testing

@testable import KioskKit

/// #28 item 6: the installation ID used to be kept in the cache root, in Caches, so every purge or new cache root
/// registered a new installation of the purchase, and after the cap the purchase was refused. Now it is kept out of
/// the cache root (or given by the app), a new root is the same installation, and a new ID takes a place that a
/// removal frees.
@Suite("Installation identity", .serialized, .timeLimit(.minutes(2)))
struct InstallationIdentityTests {
    typealias Sample = TestServer.Sample

    static func client(
        _ server: TestServer, root: URL, identity: InstallationIdentity? = nil
    ) async throws -> KioskClient {
        var configuration = KioskClient.Configuration()
        configuration.retryPolicy = RetryPolicy(baseDelay: 0.05, maximumDelay: 0.5, maximumAttempts: 2)
        if let identity { configuration.installationIdentity = identity }
        return try await KioskClient(serverURL: server.baseURL, cacheRoot: root, configuration: configuration)
    }

    /// With the default identity (kept in the user's data folder, not in the cache root), a purged cache root and a
    /// new one are the same installation: a purchase capped at one installation serves both. It used to refuse the
    /// second with `installation_limit`.
    @Test func aNewCacheRootIsTheSameInstallation() async throws {
        try await TestServer.with(configure: { $0.maxInstallations = 1 }) { server in
            let proof = PurchaseProof.receipt(try await server.buy(Sample.book).receiptData)
            let first = server.makeScratchDirectory()
            // The default configuration, as an app gets it.
            let client = try await KioskClient(serverURL: server.baseURL, cacheRoot: first)
            _ = try await client.ensureInstalled(productID: Sample.book, proof: proof)
            let id = client.installationID
            await client.close()
            try FileManager.default.removeItem(at: first)  // what a purge of Caches does

            let next = try await KioskClient(serverURL: server.baseURL, cacheRoot: server.makeScratchDirectory())
            #expect(next.installationID == id)
            _ = try await next.ensureInstalled(productID: Sample.book, proof: proof)
            await next.close()
        }
    }

    /// A store of the app's choosing, kept across cache roots; then wiped with the root (a reinstall): a new
    /// installation, refused at the cap until it removes the old one, and the removal limit holds.
    @Test func aWipedStoreIsANewInstallationThatARemovalAdmits() async throws {
        try await TestServer.with(configure: {
            $0.maxInstallations = 1
            $0.maxInstallationRemovals = 1
        }) { server in
            let proof = PurchaseProof.receipt(try await server.buy(Sample.book).receiptData)
            let store = server.makeScratchDirectory()
            let old = try await Self.client(server, root: server.makeScratchDirectory(), identity: .stored(in: store))
            _ = try await old.ensureInstalled(productID: Sample.book, proof: proof)
            let oldID = old.installationID
            await old.close()
            let again = try await Self.client(server, root: server.makeScratchDirectory(), identity: .stored(in: store))
            #expect(again.installationID == oldID)
            await again.close()

            try FileManager.default.removeItem(at: store)
            let fresh = try await Self.client(server, root: server.makeScratchDirectory(), identity: .stored(in: store))
            #expect(fresh.installationID != oldID)
            do {
                _ = try await fresh.ensureInstalled(productID: Sample.book, proof: proof)
                Issue.record("a new installation was admitted past the cap")
            } catch let error as KioskError {
                #expect(error.apiCode == .installationLimit, "\(error)")
            }
            let left = try await fresh.removeInstallation(oldID, productID: Sample.book, proof: proof)
            #expect(left.installations.isEmpty && left.removalsLeft == 0)
            _ = try await fresh.ensureInstalled(productID: Sample.book, proof: proof)

            // Removing and re-adding stops at the removal limit.
            let another = try await Self.client(
                server, root: server.makeScratchDirectory(), identity: .stored(in: server.makeScratchDirectory()))
            do {
                _ = try await another.removeInstallation(fresh.installationID, productID: Sample.book, proof: proof)
                Issue.record("a removal past the limit was allowed")
            } catch let error as KioskError {
                #expect(error.code == "removal_limit", "\(error)")
            }
            await fresh.close()
            await another.close()
        }
    }

    /// The app's own ID (kept in the Keychain, it survives reinstalls) is the one sent; one the server would refuse
    /// is refused at once, before anything is written.
    @Test func theAppsOwnIDIsUsedAndAMalformedOneRefused() async throws {
        try await TestServer.with(configure: { $0.maxInstallations = 1 }) { server in
            let proof = PurchaseProof.receipt(try await server.buy(Sample.book).receiptData)
            let client = try await Self.client(
                server, root: server.makeScratchDirectory(), identity: .app("keychain-2F9C.device_1"))
            #expect(client.installationID == "keychain-2F9C.device_1")
            _ = try await client.ensureInstalled(productID: Sample.book, proof: proof)
            await client.close()
            let reinstalled = try await Self.client(
                server, root: server.makeScratchDirectory(), identity: .app("keychain-2F9C.device_1"))
            _ = try await reinstalled.ensureInstalled(productID: Sample.book, proof: proof)
            await reinstalled.close()

            for bad in ["", "has space", String(repeating: "x", count: 129), "ünï"] {
                let root = server.makeScratchDirectory()
                do {
                    _ = try await Self.client(server, root: root, identity: .app(bad))
                    Issue.record("the app ID '\(bad)' was taken")
                } catch let error as KioskError {
                    #expect(error.code == "invalid_argument", "\(error)")
                }
                #expect(!FileManager.default.fileExists(atPath: root.path), "the cache root was created")
            }
        }
    }
}

import Foundation
import KioskCore
import KioskServer
import Testing

@testable import KioskKit

/// A purchase used on as many installations as the server allows, moved to a new one with KioskKit: the new one is
/// refused with `installation_limit`, lists the installations, removes one, and is admitted; removals past the limit
/// are refused with `removal_limit` until the window rolls (the server's clock is moved, never slept).
@Suite("Installations end to end", .serialized, .timeLimit(.minutes(2)))
struct InstallationsEndToEndTests {
    typealias Sample = TestServer.Sample

    /// A client on a fresh cache root with an installation ID store of its own: a new installation.
    func makeClient(_ server: TestServer) async throws -> KioskClient {
        var configuration = KioskClient.Configuration()
        configuration.installationIdentity = .stored(in: server.makeScratchDirectory())
        configuration.retryPolicy = RetryPolicy(baseDelay: 0.05, maximumDelay: 0.5, maximumAttempts: 3)
        return try await KioskClient(
            serverURL: server.baseURL, cacheRoot: server.makeScratchDirectory(), configuration: configuration)
    }

    /// The error `body` throws, as KioskKit reports it.
    func kioskError(_ body: () async throws(KioskKit.KioskError) -> some Any) async -> KioskKit.KioskError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error
        }
    }

    @Test func aPurchaseAtTheCapMovesToANewInstallationByRemovingAnOldOne() async throws {
        let clock = TestServer.manualClock()
        try await TestServer.with(configure: {
            $0.clock = clock
            $0.maxInstallations = 2
            $0.maxInstallationRemovals = 1
            $0.installationRemovalWindow = .seconds(3600)
        }) { server in
            let proof = PurchaseProof.receipt(try await server.buy(Sample.book).receiptData)
            let phone = try await makeClient(server)
            let tablet = try await makeClient(server)
            let laptop = try await makeClient(server)
            let start = clock.now
            _ = try await phone.ensureInstalled(productID: Sample.book, proof: proof)
            clock.advance(by: 1)
            _ = try await tablet.ensureInstalled(productID: Sample.book, proof: proof)
            clock.advance(by: 1)
            // A known installation asking again takes no new place; it is seen later.
            _ = try await server.grant(Sample.book, proof: proof, installationID: phone.installationID)

            let refused = await kioskError { () async throws(KioskKit.KioskError) in
                try await laptop.ensureInstalled(productID: Sample.book, proof: proof)
            }
            #expect(refused?.apiCode == .installationLimit)
            guard case .server(403, _, let message, _)? = refused else { throw try #require(refused) }
            #expect(message.contains("used on 2 installations"))
            #expect(message.contains("POST /v1/installations/remove"))
            #expect(message.contains("KioskClient.removeInstallation(_:productID:proof:)"))
            #expect(message.contains("1 removal is left."))

            let listed = try await laptop.installations(productID: Sample.book, proof: proof)
            #expect(listed.installations.map(\.installationID) == [phone.installationID, tablet.installationID])
            #expect(listed.installations.map(\.firstSeen) == [start, start.addingTimeInterval(1)])
            #expect(listed.installations.map(\.lastSeen) == [start.addingTimeInterval(2), start.addingTimeInterval(1)])
            #expect(listed.limit == 2 && listed.removalsLeft == 1 && listed.removalsResetAt == nil)
            // The wire shape: every field present, null when no removal counts.
            let raw = try await server.post(
                "/v1/installations", InstallationsRequest(proof: proof, productID: Sample.book))
            #expect(raw.status == 200)
            let text = String(decoding: raw.body, as: UTF8.self)
            #expect(text.contains(#""limit":2"#) && text.contains(#""removals_left":1"#))
            #expect(text.contains(#""removals_reset_at":null"#) && text.contains(#""first_seen":""#))

            let left = try await laptop.removeInstallation(phone.installationID, productID: Sample.book, proof: proof)
            #expect(left.installations.map(\.installationID) == [tablet.installationID])
            let removedAt = clock.now
            #expect(left.removalsLeft == 0 && left.removalsResetAt == removedAt.addingTimeInterval(3600))
            clock.advance(by: 1)
            _ = try await laptop.ensureInstalled(productID: Sample.book, proof: proof)
            let now = try await laptop.installations(productID: Sample.book, proof: proof)
            #expect(now.installations.map(\.installationID) == [tablet.installationID, laptop.installationID])

            // Past the removal limit: refused with the date of the next removal, nothing removed.
            let limited = await kioskError { () async throws(KioskKit.KioskError) in
                try await laptop.removeInstallation(tablet.installationID, productID: Sample.book, proof: proof)
            }
            #expect(limited?.apiCode == .removalLimit)
            guard case .server(403, "removal_limit", let limitMessage, let retryAfter)? = limited else {
                throw try #require(limited)
            }
            #expect(retryAfter == 3599)
            #expect(limitMessage.contains(RFC3339.string(from: removedAt.addingTimeInterval(3600))))
            #expect(try await laptop.installations(productID: Sample.book, proof: proof).installations.count == 2)
            // An installation the purchase does not have.
            let unknown = await kioskError { () async throws(KioskKit.KioskError) in
                try await laptop.removeInstallation("not-one-of-them", productID: Sample.book, proof: proof)
            }
            #expect(unknown?.apiCode == .notFound)
            // A product the proof does not hold: refused as a grant is.
            let other = await kioskError { () async throws(KioskKit.KioskError) in
                try await laptop.installations(productID: Sample.magazine, proof: proof)
            }
            #expect(other?.apiCode == .notEntitled)

            // Once the removal leaves the window, one removal is back.
            clock.set(removedAt.addingTimeInterval(3600))
            let later = try await laptop.removeInstallation(
                tablet.installationID, productID: Sample.book, proof: proof)
            #expect(later.installations.map(\.installationID) == [laptop.installationID])
            #expect(later.removalsLeft == 0)
            for client in [phone, tablet, laptop] { await client.close() }
        }
    }
}

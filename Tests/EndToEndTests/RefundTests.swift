import Foundation
import KioskCore
import Testing

@testable import KioskServer

/// What a refund revokes, for receipts and for StoreKit 2 signed transactions, against the real server and its
/// sandbox store: a subscription period's refund closes only what that period paid for, a reversed refund opens it
/// again, and a refunded non-consumable or a family-sharing revocation ends the whole purchase.
@Suite("Server: refunds and revocations", .serialized, .timeLimit(.minutes(3)))
struct RefundTests {
    typealias Sample = TestServer.Sample

    /// The two proofs of purchase an app can send.
    enum Proof: String, CaseIterable, CustomTestStringConvertible {
        case receipt
        case signedTransaction

        var testDescription: String { rawValue }

        func of(_ purchase: SandboxPurchaseResponse) throws -> PurchaseProof {
            switch self {
            case .receipt: .receipt(purchase.receiptData)
            case .signedTransaction: .signedTransaction(try #require(purchase.signedTransaction))
            }
        }
    }

    /// A subscription with several paid periods, one issue published inside each, and a grant for each issue.
    struct Subscription {
        let proof: PurchaseProof
        /// The paid periods' transactions, oldest first; the first is the original transaction.
        let periods: [String]
        /// The issue published inside each period, in the same order.
        let issues: [String]
        /// The grant of each issue, in the same order.
        let grants: [Grant]
    }

    /// Buys the monthly subscription, renews it until it has `periods` paid periods, publishes an issue a day into
    /// each period, and takes a grant for each issue (each token paid by its own period).
    func subscribe(_ server: TestServer, _ proof: Proof, periods count: Int) async throws -> Subscription {
        let purchase = try await server.buy(Sample.subscription)
        var periods = [(id: purchase.transactionID, start: purchase.purchaseDate)]
        for _ in 1..<count {
            let renewal = try #require(try await server.notify(purchase.transactionID, .renew).result?.transactionID)
            let recorded = try #require(try await server.server.ledger.transaction(id: renewal))
            periods.append((renewal, recorded.purchaseDate))
        }
        var issues: [String] = []
        for (index, period) in periods.enumerated() {
            let issue = "com.example.kiosk.magazine.test-period-\(index + 1)"
            try server.publishIssue(issue, at: period.start.addingTimeInterval(86_400))
            issues.append(issue)
        }
        await server.reloadCatalog()
        let signed = try proof.of(purchase)
        var grants: [Grant] = []
        for issue in issues { grants.append(try await server.grant(issue, proof: signed)) }
        return Subscription(proof: signed, periods: periods.map(\.id), issues: issues, grants: grants)
    }

    /// The status of a ranged request for the grant's first file with its token.
    func fetch(_ server: TestServer, _ grant: Grant) async throws -> RawHTTPResponse {
        let file = try #require(grant.files.first)
        return try await server.send(
            "GET", file.url, headers: [("Authorization", "Bearer \(grant.token)"), ("Range", "bytes=0-99")])
    }

    /// The error code of a refusal.
    func code(_ response: RawHTTPResponse) throws -> String {
        try KioskJSON.decode(APIErrorEnvelope.self, from: response.body).error.code
    }

    /// Asks for a grant and returns the raw answer.
    func askGrant(_ server: TestServer, _ productID: String, _ proof: PurchaseProof) async throws -> RawHTTPResponse {
        try await server.post(
            "/v1/downloads", GrantRequest(proof: proof, productID: productID, installationID: TestServer.installationID)
        )
    }

    @Test("Refunding the first period closes its issue only; the paid renewal stays open", arguments: Proof.allCases)
    func firstPeriodRefunded(_ proof: Proof) async throws {
        try await TestServer.with { server in
            let subscription = try await subscribe(server, proof, periods: 2)
            _ = try await server.notify(subscription.periods[0], .refund)

            let refunded = try await fetch(server, subscription.grants[0])
            #expect(refunded.status == 403)
            #expect(try code(refunded) == "transaction_revoked")
            #expect(try await fetch(server, subscription.grants[1]).status == 206)
            // A new grant for the renewal's issue opens content; the refunded period's issue is not granted.
            let renewed = try await server.grant(subscription.issues[1], proof: subscription.proof)
            #expect(try await fetch(server, renewed).status == 206)
            let closed = try await askGrant(server, subscription.issues[0], subscription.proof)
            #expect(closed.status == 403)
            #expect(try code(closed) == "not_entitled")
            // Restore lists the renewal's issue, not the refunded period's.
            let restored = try await server.postJSON(
                "/v1/receipts/verify", ReceiptVerificationRequest(proof: subscription.proof),
                as: EntitlementsResponse.self)
            let listed = Set(restored.entitlements.map(\.productID))
            #expect(listed.contains(subscription.issues[1]) && !listed.contains(subscription.issues[0]))
        }
    }

    @Test("Refunding a middle period closes its issue only", arguments: Proof.allCases)
    func middlePeriodRefunded(_ proof: Proof) async throws {
        try await TestServer.with { server in
            let subscription = try await subscribe(server, proof, periods: 3)
            _ = try await server.notify(subscription.periods[1], .refund)

            #expect(try await fetch(server, subscription.grants[0]).status == 206)
            #expect(try code(try await fetch(server, subscription.grants[1])) == "transaction_revoked")
            #expect(try await fetch(server, subscription.grants[2]).status == 206)
            #expect(try code(try await askGrant(server, subscription.issues[1], subscription.proof)) == "not_entitled")
            for index in [0, 2] {
                let grant = try await server.grant(subscription.issues[index], proof: subscription.proof)
                #expect(try await fetch(server, grant).status == 206)
            }
        }
    }

    @Test("A reversed refund opens the period's content again", arguments: Proof.allCases)
    func refundReversed(_ proof: Proof) async throws {
        try await TestServer.with { server in
            let subscription = try await subscribe(server, proof, periods: 2)
            _ = try await server.notify(subscription.periods[0], .refund)
            #expect(try code(try await fetch(server, subscription.grants[0])) == "transaction_revoked")
            #expect(try code(try await askGrant(server, subscription.issues[0], subscription.proof)) == "not_entitled")

            let reversal = try await server.notify(subscription.periods[0], .refundReversed)
            #expect(reversal.result?.notificationType == "REFUND_REVERSED")
            #expect(reversal.result?.outcome == .applied)
            #expect(try await fetch(server, subscription.grants[0]).status == 206)
            let twice = try await server.post(
                "/sandbox/notifications",
                SandboxNotificationRequest(transactionID: subscription.periods[0], kind: .refundReversed))
            #expect(twice.status == 400)
            // The proof, verified again (the refund still in a cached answer or not), does not revoke it again.
            let again = try await server.grant(subscription.issues[0], proof: subscription.proof)
            #expect(try await fetch(server, again).status == 206)
            #expect(try await fetch(server, subscription.grants[0]).status == 206)
            #expect(try await server.server.ledger.transaction(id: subscription.periods[0])?.cancellationDate == nil)
        }
    }

    @Test("A refunded non-consumable closes every token of the purchase", arguments: Proof.allCases)
    func nonConsumableRefunded(_ proof: Proof) async throws {
        try await TestServer.with { server in
            let purchase = try await server.buy(Sample.book)
            let grant = try await server.grant(Sample.book, proof: try proof.of(purchase))
            #expect(try await fetch(server, grant).status == 206)
            _ = try await server.notify(purchase.transactionID, .refund)
            #expect(try code(try await fetch(server, grant)) == "transaction_revoked")
            #expect(try code(try await askGrant(server, Sample.book, try proof.of(purchase))) == "not_entitled")
        }
    }

    @Test("A family-sharing revocation ends the whole subscription", arguments: Proof.allCases)
    func subscriptionRevoked(_ proof: Proof) async throws {
        try await TestServer.with { server in
            let subscription = try await subscribe(server, proof, periods: 2)
            _ = try await server.notify(subscription.periods[0], .revoke)
            for (issue, grant) in zip(subscription.issues, subscription.grants) {
                #expect(try code(try await fetch(server, grant)) == "transaction_revoked")
                #expect(try code(try await askGrant(server, issue, subscription.proof)) == "not_entitled")
            }
        }
    }

    @Test("A customer locked out by the previous release gets access back at start", arguments: Proof.allCases)
    func lockOutRecordedByThePreviousRelease(_ proof: Proof) async throws {
        let fixture = try #require(Bundle.module.resourceURL).appendingPathComponent("Fixtures/legacy-lockout")
        let facts = try JSONDecoder().decode(
            [String: String].self, from: Data(contentsOf: fixture.appendingPathComponent("fixture.json")))
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-legacy-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: fixture.appendingPathComponent("data"), to: data)
        defer { try? FileManager.default.removeItem(at: data) }
        try await TestServer.with(configure: { $0.dataDirectory = data }) { server in
            let issue = try #require(facts["issue"])
            try server.publishIssue(issue, at: try #require(facts["published_at"].flatMap(RFC3339.date(from:))))
            await server.reloadCatalog()
            // A new grant with either proof works.
            let signed: PurchaseProof =
                switch proof {
                case .receipt: .receipt(try #require(facts["receipt"]))
                case .signedTransaction: .signedTransaction(try #require(facts["signed_transaction"]))
                }
            let grant = try await server.grant(issue, proof: signed)
            #expect(try await fetch(server, grant).status == 206)
            // The token the previous release issued, and refused after the first period's refund, opens content.
            var previous = grant
            previous.token = try #require(facts["token"])
            #expect(try await fetch(server, previous).status == 206)
            // The refunded first period still counts as refunded.
            let original = try #require(facts["original_transaction_id"])
            #expect(try await server.server.ledger.transaction(id: original)?.cancellationDate != nil)
        }
    }
}

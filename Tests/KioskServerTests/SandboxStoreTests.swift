import Crypto
import Foundation
import KioskCore
import KioskServerTestSupport
import KioskStore
import Testing

@testable import KioskServer

/// A sandbox store over a fresh database (``TestDatabase``), a temporary data folder and a temporary catalog. The
/// tests of input the store refuses before reading its records run on SQLite only.
struct SandboxTestHarness {
    static let bundleID = "com.example.kiosk"
    static let issue = "com.example.issue"
    static let coins = "com.example.coins"
    static let monthly = "com.example.monthly"
    static let pass = "com.example.pass"
    static let passWithoutPeriod = "com.example.pass-default"

    let database: KioskDatabase
    let store: SandboxStore
    let clock: ServerTestClock
    let content: ServerTestDirectory
    let data: ServerTestDirectory
    let catalog: ContentCatalog
    /// The signing chain, when the harness was made `signing`.
    var authority: SandboxSigningAuthority? = nil

    /// Runs `body` with a fresh harness over a fresh database on `engine`, deleted afterwards.
    /// With `signing`, the store has its signing chain (``authority``): it signs StoreKit 2 transactions and
    /// notifications, and serves the App Store Server API.
    static func with<T>(
        _ engine: KioskDatabase.Engine, sharedSecret: String? = nil, signing: Bool = false,
        _ body: (SandboxTestHarness) async throws -> T
    ) async throws -> T {
        try await TestDatabase.with(engine) { database in
            try await body(try await make(database: database, sharedSecret: sharedSecret, signing: signing))
        }
    }

    static func make(
        database: KioskDatabase, sharedSecret: String? = nil, dataDirectory: ServerTestDirectory? = nil,
        signing: Bool = false
    ) async throws -> SandboxTestHarness {
        let content = try ServerTestDirectory("sandbox-content")
        let data = try dataDirectory ?? ServerTestDirectory("sandbox-data")
        try content.writeProduct(id: issue, type: "non_consumable", files: ["Contents/issue.pdf": Data("pdf".utf8)])
        try content.writeProduct(id: coins, type: "consumable")
        try content.writeProduct(id: monthly, type: "auto_renewable", subscriptionPeriod: "P1M")
        try content.writeProduct(id: pass, type: "non_renewing", subscriptionPeriod: "P7D")
        try content.writeProduct(id: passWithoutPeriod, type: "non_renewing")
        let catalog = await ContentCatalog(
            contentDirectory: content.url, dataDirectory: data.url, logger: LogRecorder().logger)
        let clock = ServerTestClock(ServerTestFixtures.november2026)
        let authority =
            signing
            ? try await SandboxSigningAuthority.load(
                from: database.sql, adoptingFileIn: data.url, now: ServerTestFixtures.november2026)
            : nil
        let store = try await SandboxStore.open(
            database: database, dataDirectory: data.url, catalog: catalog, bundleID: bundleID,
            sharedSecret: sharedSecret, signingAuthority: authority, now: clock.closure)
        return SandboxTestHarness(
            database: database, store: store, clock: clock, content: content, data: data, catalog: catalog,
            authority: authority)
    }

    /// The store's receipt signing key, as it keeps it in the database.
    func signingKey() async throws -> SymmetricKey {
        let text = try await database.sql.select().column("value").from("sandbox_keys")
            .where("name", .equal, SandboxKeys.receiptKey.name)
            .first(decodingColumn: "value", as: String.self)
        let key = try #require(text.flatMap { Data(base64Encoded: $0) })
        return SymmetricKey(data: key)
    }

    func buy(_ productID: String, quantity: Int? = nil, user: String? = nil) async throws -> SandboxPurchaseResponse {
        try await store.purchase(SandboxPurchaseRequest(productID: productID, quantity: quantity, user: user))
    }

    func verify(
        _ receiptData: String, password: String? = nil, excludeOld: Bool? = nil,
        environment: StoreEnvironment = .sandbox
    ) async throws -> AppleVerifyReceiptResponse {
        let body = try JSONEncoder().encode(
            AppleVerifyReceiptRequest(receiptData: receiptData, password: password, excludeOldTransactions: excludeOld))
        return try await store.verifyReceipt(body: body, environment: environment)
    }

    /// The `in_app` list of a successful answer.
    static func inApp(_ response: AppleVerifyReceiptResponse) -> [AppleTransaction] {
        guard case .app(let receipt)? = response.receipt else { return [] }
        return receipt.inApp
    }
}

/// Takes a sandbox receipt apart and puts it back together, to tamper with it.
enum SandboxReceiptSurgery {
    static func envelope(_ receiptData: String) throws -> [String: String] {
        let outer = try #require(Data(base64Encoded: receiptData))
        return try #require(try JSONSerialization.jsonObject(with: outer) as? [String: String])
    }

    static func assemble(_ envelope: [String: String]) throws -> String {
        try JSONSerialization.data(withJSONObject: envelope, options: [.sortedKeys]).base64EncodedString()
    }

    static func payload(_ receiptData: String) throws -> SandboxReceipt {
        let payload = try #require(Data(base64Encoded: try envelope(receiptData)["payload"] ?? ""))
        return try JSONDecoder().decode(SandboxReceipt.self, from: payload)
    }

    /// The receipt with `receipt` as its payload, keeping the old signature (or signing with `key`).
    static func replacingPayload(
        of receiptData: String, with receipt: SandboxReceipt, signingWith key: SymmetricKey? = nil
    ) throws -> String {
        var parts = try envelope(receiptData)
        let payload = try JSONEncoder().encode(receipt)
        parts["payload"] = payload.base64EncodedString()
        if let key {
            parts["signature"] = Data(HMAC<SHA256>.authenticationCode(for: payload, using: key)).base64EncodedString()
        }
        return try assemble(parts)
    }
}

@Suite("Sandbox store")
struct SandboxStoreTests {
    typealias H = SandboxTestHarness

    private func expectError<T>(
        _ code: APIErrorCode, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T
    ) async {
        do {
            let value = try await body()
            Issue.record("expected \(code), got \(value)", sourceLocation: sourceLocation)
        } catch let error as any APIResponseError {
            #expect(error.errorCode == code, "\(error.message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected a refusal \(code), got \(error)", sourceLocation: sourceLocation)
        }
    }

    // MARK: Purchases

    @Test(arguments: TestDatabase.engines)
    func purchaseReturnsAReceiptListingTheTransaction(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let bought = try await h.buy(H.issue)
            #expect(bought.productID == H.issue)
            #expect(bought.transactionID.count == 16 && bought.transactionID.hasPrefix("2"))
            #expect(bought.transactionID.allSatisfy { $0.isNumber })
            #expect(bought.originalTransactionID == bought.transactionID)
            #expect(bought.purchaseDate == h.clock.now)
            #expect(bought.expiresDate == nil)

            let receipt = try #require(SandboxReceipt.decode(bought.receiptData, signingKey: try await h.signingKey()))
            #expect(receipt.transactionIDs == [bought.transactionID])
            #expect(receipt.user == "default")
            #expect(receipt.bundleID == H.bundleID)

            let answer = try await h.verify(bought.receiptData)
            #expect(answer.status == 0)
            #expect(H.inApp(answer).map(\.transactionID) == [bought.transactionID])
            #expect(H.inApp(answer).first?.productID == H.issue)
            #expect(H.inApp(answer).first?.quantity == 1)
            #expect(H.inApp(answer).first?.cancellationDate == nil)
        }
    }

    /// The receipt key lives in the database: a restart, and another instance with a data folder of its own, read
    /// the receipts the first issued; no key file is written.
    @Test(arguments: TestDatabase.engines)
    func theReceiptKeyIsSharedByEveryInstanceOfTheDatabase(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            #expect(!FileManager.default.fileExists(atPath: h.data.url(SandboxKeys.receiptKey.legacyFile).path))
            #expect(try await h.signingKey().bitCount == 256)
            let bought = try await h.buy(H.issue)
            let elsewhere = try ServerTestDirectory("sandbox-other-instance")
            let other = try await SandboxStore.open(
                database: h.database, dataDirectory: elsewhere.url, catalog: h.catalog, bundleID: H.bundleID,
                sharedSecret: nil, now: h.clock.closure)
            let body = try JSONEncoder().encode(AppleVerifyReceiptRequest(receiptData: bought.receiptData))
            let answer = try await other.verifyReceipt(body: body, environment: .sandbox)
            #expect(answer.status == 0)
            #expect(H.inApp(answer).map(\.transactionID) == [bought.transactionID])
        }
    }

    /// An earlier release kept the key in `--data/sandbox-receipt.key`: the first start adopts it, so the receipts
    /// apps hold stay valid.
    @Test func aKeyFileOfAnEarlierReleaseIsAdopted() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let data = try ServerTestDirectory("sandbox-old-data")
            let key = SymmetricKey(size: .bits256)
            try key.withUnsafeBytes { Data($0) }.write(to: data.url(SandboxKeys.receiptKey.legacyFile))
            let h = try await H.make(database: database, dataDirectory: data)
            #expect(try await h.signingKey() == key)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func buyingANonConsumableAgainReturnsTheSameTransaction(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let first = try await h.buy(H.issue)
            h.clock.advance(by: 3600)
            let second = try await h.buy(H.issue, quantity: 1)
            #expect(second.transactionID == first.transactionID)
            #expect(second.originalTransactionID == first.transactionID)
            #expect(second.purchaseDate == first.purchaseDate)
            let receipt = try #require(SandboxReceipt.decode(second.receiptData, signingKey: try await h.signingKey()))
            #expect(receipt.transactionIDs == [first.transactionID])

            // Another user buys it for themselves.
            let other = try await h.buy(H.issue, user: "bob")
            #expect(other.transactionID != first.transactionID)

            // Once refunded, buying it again is a new purchase.
            _ = try await h.store.refund(SandboxRefundRequest(transactionID: first.transactionID))
            let third = try await h.buy(H.issue)
            #expect(third.transactionID != first.transactionID)
            let after = try #require(SandboxReceipt.decode(third.receiptData, signingKey: try await h.signingKey()))
            #expect(Set(after.transactionIDs) == [first.transactionID, third.transactionID])
        }
    }

    @Test(arguments: TestDatabase.engines)
    func consumablesAreBoughtAgainWithTheirQuantity(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let five = try await h.buy(H.coins, quantity: 5)
            let one = try await h.buy(H.coins)
            let hundred = try await h.buy(H.coins, quantity: 100)
            #expect(Set([five.transactionID, one.transactionID, hundred.transactionID]).count == 3)

            let answer = try await h.verify(hundred.receiptData)
            #expect(answer.status == 0)
            let quantities = Dictionary(uniqueKeysWithValues: H.inApp(answer).map { ($0.transactionID, $0.quantity) })
            #expect(quantities == [five.transactionID: 5, one.transactionID: 1, hundred.transactionID: 100])
        }
    }

    @Test(arguments: [0, -1, 101, Int.max, Int.min])
    func consumableQuantityOutOfRangeIsRefused(quantity: Int) async throws {
        try await H.with(.sqlite) { h in
            await expectError(.badRequest) { try await h.buy(H.coins, quantity: quantity) }
        }
    }

    @Test(arguments: [SandboxTestHarness.issue, SandboxTestHarness.monthly, SandboxTestHarness.pass])
    func onlyConsumablesComeInQuantities(productID: String) async throws {
        try await H.with(.sqlite) { h in
            await expectError(.badRequest) { try await h.buy(productID, quantity: 2) }
            _ = try await h.buy(productID, quantity: 1)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func subscriptionRenewalsChainFromThePreviousExpiry(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let december = try #require(RFC3339.date(from: "2026-12-01T00:00:00Z"))
            let january = try #require(RFC3339.date(from: "2027-01-01T00:00:00Z"))
            let february = try #require(RFC3339.date(from: "2027-02-01T00:00:00Z"))

            let first = try await h.buy(H.monthly)
            #expect(first.purchaseDate == ServerTestFixtures.november2026)
            #expect(first.expiresDate == december)
            #expect(first.originalTransactionID == first.transactionID)

            h.clock.advance(by: 86_400)
            let second = try await h.buy(H.monthly)
            #expect(second.transactionID != first.transactionID)
            #expect(second.originalTransactionID == first.transactionID)
            #expect(second.purchaseDate == december, "a renewal starts at the previous expiry")
            #expect(second.expiresDate == january)

            h.clock.advance(by: 86_400)
            let third = try await h.buy(H.monthly)
            #expect(third.originalTransactionID == first.transactionID)
            #expect(third.purchaseDate == january)
            #expect(third.expiresDate == february)

            // After the last period has ended, a purchase starts now.
            let later = february.addingTimeInterval(86_400)
            h.clock.set(later)
            let fresh = try await h.buy(H.monthly)
            #expect(fresh.purchaseDate == later)
            #expect(fresh.expiresDate == SubscriptionPeriod(iso8601: "P1M")!.end(from: later))

            // Other users' subscriptions are their own.
            let bob = try await h.buy(H.monthly, user: "bob")
            #expect(bob.purchaseDate == later)
            #expect(bob.originalTransactionID == bob.transactionID)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func renewalExactlyAtExpiryStartsNow(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let first = try await h.buy(H.monthly)
            let expiry = try #require(first.expiresDate)
            h.clock.set(expiry)
            let next = try await h.buy(H.monthly)
            #expect(next.purchaseDate == expiry)
            #expect(next.expiresDate == SubscriptionPeriod(iso8601: "P1M")!.end(from: expiry))
        }
    }

    @Test(arguments: TestDatabase.engines)
    func aRefundedSubscriptionDoesNotExtendTheNextPurchase(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let first = try await h.buy(H.monthly)
            h.clock.advance(by: 3600)
            _ = try await h.store.refund(SandboxRefundRequest(transactionID: first.transactionID))
            let next = try await h.buy(H.monthly)
            #expect(next.purchaseDate == h.clock.now)
            #expect(next.originalTransactionID == next.transactionID)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func nonRenewingSubscriptionsRunForTheirPeriodFromNow(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let first = try await h.buy(H.pass)
            #expect(first.purchaseDate == h.clock.now)
            #expect(first.expiresDate == h.clock.now.addingTimeInterval(7 * 86_400))
            let second = try await h.buy(H.pass)
            #expect(second.transactionID != first.transactionID)
            #expect(second.originalTransactionID == second.transactionID)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func nonRenewingSubscriptionWithoutAPeriodDefaultsToOneMonth(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let bought = try await h.buy(H.passWithoutPeriod)
            #expect(bought.expiresDate == SubscriptionPeriod(iso8601: "P1M")!.end(from: h.clock.now))
        }
    }

    @Test func unknownProductIsNotFound() async throws {
        try await H.with(.sqlite) { h in
            await expectError(.notFound) { try await h.buy("com.example.unknown") }
        }
    }

    @Test(arguments: ["", "../x", "a/b", "with space", ".hidden", String(repeating: "p", count: 256)])
    func invalidProductIDIsABadRequest(productID: String) async throws {
        try await H.with(.sqlite) { h in
            await expectError(.badRequest) { try await h.buy(productID) }
        }
    }

    @Test(arguments: [
        "", " ", "a b", "é", "ａ", "a/b", "a;b", "a\u{0}b", "a\nb", "<script>", String(repeating: "u", count: 65),
    ])
    func badUserNamesAreRefused(user: String) async throws {
        try await H.with(.sqlite) { h in
            await expectError(.badRequest) { try await h.buy(H.issue, user: user) }
        }
    }

    @Test(
        arguments: TestDatabase.engines,
        ["alice", "alice@example.com", "a.b_c-d", "A1", String(repeating: "u", count: 64)])
    func goodUserNamesBuy(engine: KioskDatabase.Engine, user: String) async throws {
        try await H.with(engine) { h in
            let bought = try await h.buy(H.issue, user: user)
            let receipt = try #require(SandboxReceipt.decode(bought.receiptData, signingKey: try await h.signingKey()))
            #expect(receipt.user == user)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func receiptsListOnlyTheirUsersPurchases(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let alice = try await h.buy(H.issue, user: "alice")
            let bob = try await h.buy(H.coins, user: "bob")
            let aliceAnswer = try await h.verify(alice.receiptData)
            let bobAnswer = try await h.verify(bob.receiptData)
            #expect(H.inApp(aliceAnswer).map(\.transactionID) == [alice.transactionID])
            #expect(H.inApp(bobAnswer).map(\.transactionID) == [bob.transactionID])
        }
    }

    // MARK: verifyReceipt

    @Test(arguments: [
        "", "not json", "{}", "[]", "null", #"{"receipt-data": 5}"#, #"{"receipt-data": null}"#, #"{"password": "x"}"#,
    ])
    func malformedRequestsAnswer21000(body: String) async throws {
        try await H.with(.sqlite) { h in
            let answer = try await h.store.verifyReceipt(body: Data(body.utf8), environment: .sandbox)
            #expect(answer.status == 21000)
            #expect(answer.receipt == nil)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func tamperedReceiptsAnswer21002(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let bought = try await h.buy(H.issue)
            let receiptData = bought.receiptData
            #expect(try await h.verify(receiptData).status == 0)

            var tampered: [(String, String)] = []
            // Garbage and truncation.
            tampered.append(("not base64", "!!!not base64!!!"))
            tampered.append(("empty", ""))
            tampered.append(("truncated", String(receiptData.dropLast(8))))
            tampered.append(("first byte changed", "f" + receiptData.dropFirst()))

            // One character of the payload's base64 changed, signature kept.
            let envelope = try SandboxReceiptSurgery.envelope(receiptData)
            let payload = try #require(envelope["payload"])
            for offset in [0, 5, payload.count / 2, payload.count - 5] {
                var characters = Array(payload)
                characters[offset] = characters[offset] == "A" ? "B" : "A"
                var changed = envelope
                changed["payload"] = String(characters)
                tampered.append(("payload character \(offset)", try SandboxReceiptSurgery.assemble(changed)))
            }
            // One byte of the decoded payload flipped, signature kept.
            var payloadBytes = try #require(Data(base64Encoded: payload))
            payloadBytes[payloadBytes.count / 2] ^= 0x01
            var flipped = envelope
            flipped["payload"] = payloadBytes.base64EncodedString()
            tampered.append(("payload byte flipped", try SandboxReceiptSurgery.assemble(flipped)))
            // A signature from another key, or none.
            var resigned = envelope
            resigned["signature"] = Data(
                HMAC<SHA256>.authenticationCode(for: Data(base64Encoded: payload)!, using: SymmetricKey(size: .bits256))
            ).base64EncodedString()
            tampered.append(("signed with another key", try SandboxReceiptSurgery.assemble(resigned)))
            var unsigned = envelope
            unsigned["signature"] = ""
            tampered.append(("empty signature", try SandboxReceiptSurgery.assemble(unsigned)))
            unsigned.removeValue(forKey: "signature")
            tampered.append(("no signature", try SandboxReceiptSurgery.assemble(unsigned)))

            for (name, data) in tampered {
                let answer = try await h.verify(data)
                #expect(answer.status == 21002, "\(name)")
                #expect(answer.receipt == nil, "\(name)")
            }
        }
    }

    @Test(arguments: TestDatabase.engines)
    func modifiedPayloadReencodedWithTheOldSignatureAnswers21002(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let mine = try await h.buy(H.coins, user: "mallory")
            let theirs = try await h.buy(H.issue, user: "alice")
            var receipt = try SandboxReceiptSurgery.payload(mine.receiptData)
            #expect(receipt.transactionIDs == [mine.transactionID])

            let modifications: [(String, (inout SandboxReceipt) -> Void)] = [
                ("claims another user", { $0.user = "alice" }),
                ("lists another user's transaction", { $0.transactionIDs.append(theirs.transactionID) }),
                ("changes the creation time", { $0.createdAt += 1 }),
                ("another bundle", { $0.bundleID = "com.example.other" }),
            ]
            for (name, modify) in modifications {
                var changed = receipt
                modify(&changed)
                let forged = try SandboxReceiptSurgery.replacingPayload(of: mine.receiptData, with: changed)
                #expect(try await h.verify(forged).status == 21002, "\(name)")
            }

            // The same surgery, correctly signed, is accepted: the refusals above are the signature's doing.
            receipt.user = "alice"
            let signed = try SandboxReceiptSurgery.replacingPayload(
                of: mine.receiptData, with: receipt, signingWith: try await h.signingKey())
            let answer = try await h.verify(signed)
            #expect(answer.status == 0)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func correctlySignedReceiptForAnotherBundleAnswers21002(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let bought = try await h.buy(H.issue)
            var receipt = try SandboxReceiptSurgery.payload(bought.receiptData)
            receipt.bundleID = "com.example.other"
            let forged = try SandboxReceiptSurgery.replacingPayload(
                of: bought.receiptData, with: receipt, signingWith: try await h.signingKey())
            #expect(try await h.verify(forged).status == 21002)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func receiptFromAnotherSandboxStoreAnswers21002(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            try await H.with(engine) { other in
                let foreign = try await other.buy(H.issue)
                #expect(try await h.verify(foreign.receiptData).status == 21002)
            }
        }
    }

    @Test(arguments: TestDatabase.engines, [nil, "", "wrong", "S3CRET", "s3cret "] as [String?])
    func wrongOrMissingPasswordAnswers21004(engine: KioskDatabase.Engine, password: String?) async throws {
        try await H.with(engine, sharedSecret: "s3cret") { h in
            let bought = try await h.buy(H.monthly)
            let answer = try await h.verify(bought.receiptData, password: password)
            #expect(answer.status == 21004)
            #expect(answer.receipt == nil)
            #expect(try await h.verify(bought.receiptData, password: "s3cret").status == 0)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func tamperingIsReportedBeforeThePassword(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine, sharedSecret: "s3cret") { h in
            let answer = try await h.verify("garbage", password: "wrong")
            #expect(answer.status == 21002)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func withoutASharedSecretAnyPasswordIsAccepted(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let bought = try await h.buy(H.issue)
            #expect(try await h.verify(bought.receiptData, password: "anything").status == 0)
            #expect(try await h.verify(bought.receiptData, password: nil).status == 0)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func productionEndpointAnswers21007(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let bought = try await h.buy(H.issue)
            let answer = try await h.verify(bought.receiptData, environment: .production)
            #expect(answer.status == 21007)
            #expect(answer.receipt == nil)
            #expect(try await h.verify(bought.receiptData, environment: .sandbox).status == 0)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func sandboxAnswerCarriesInAppAndLatestReceiptInfo(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let issue = try await h.buy(H.issue)
            let coins = try await h.buy(H.coins, quantity: 3)
            let month1 = try await h.buy(H.monthly)
            let month2 = try await h.buy(H.monthly)
            h.clock.advance(by: 60)

            let answer = try await h.verify(month2.receiptData)
            #expect(answer.status == 0)
            #expect(answer.environment == .sandbox)
            guard case .app(let receipt)? = answer.receipt else {
                Issue.record("expected an app receipt, got \(String(describing: answer.receipt))")
                return
            }
            #expect(receipt.bundleID == H.bundleID)
            #expect(receipt.receiptType == "ProductionSandbox")
            #expect(receipt.requestDate == h.clock.now)
            #expect(
                Set(receipt.inApp.map(\.transactionID))
                    == [issue.transactionID, coins.transactionID, month1.transactionID, month2.transactionID])

            let latest = try #require(answer.latestReceiptInfo)
            #expect(
                latest.map(\.transactionID) == [month2.transactionID, month1.transactionID],
                "subscriptions, newest first")
            #expect(latest.allSatisfy { $0.originalTransactionID == month1.transactionID })
            #expect(latest.first?.expiresDate == month2.expiresDate)

            let fresh = try #require(answer.latestReceipt)
            #expect(try await h.verify(fresh).status == 0)

            // On the wire, with Apple's names.
            let json = try #require(
                try JSONSerialization.jsonObject(with: JSONEncoder().encode(answer)) as? [String: Any])
            #expect(json["status"] as? Int == 0)
            #expect(json["environment"] as? String == "Sandbox")
            #expect((json["latest_receipt_info"] as? [Any])?.count == 2)
            #expect(((json["receipt"] as? [String: Any])?["in_app"] as? [Any])?.count == 4)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func withoutSubscriptionsThereIsNoLatestReceiptInfo(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let bought = try await h.buy(H.issue)
            let answer = try await h.verify(bought.receiptData)
            #expect(answer.status == 0)
            #expect(answer.latestReceiptInfo == nil)
            #expect(answer.latestReceipt != nil)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func anOlderReceiptListsOnlyItsTransactionsInInApp(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let first = try await h.buy(H.issue)
            let second = try await h.buy(H.coins)
            let old = try await h.verify(first.receiptData)
            #expect(H.inApp(old).map(\.transactionID) == [first.transactionID])
            let latest = try #require(old.latestReceipt)
            let renewed = try await h.verify(latest)
            #expect(Set(H.inApp(renewed).map(\.transactionID)) == [first.transactionID, second.transactionID])
        }
    }

    @Test(arguments: TestDatabase.engines)
    func excludeOldTransactionsKeepsOnlyTheLatestRenewal(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            _ = try await h.buy(H.monthly)
            _ = try await h.buy(H.monthly)
            let last = try await h.buy(H.monthly)
            _ = try await h.buy(H.issue)

            let all = try await h.verify(last.receiptData)
            #expect(all.latestReceiptInfo?.count == 3)
            #expect(try await h.verify(last.receiptData, excludeOld: false).latestReceiptInfo?.count == 3)

            let latestOnly = try await h.verify(last.receiptData, excludeOld: true)
            #expect(latestOnly.status == 0)
            #expect(latestOnly.latestReceiptInfo?.map(\.transactionID) == [last.transactionID])
            #expect(H.inApp(latestOnly).count == 3, "in_app is not filtered")

            // Apple's lenient spelling.
            let body = Data(#"{"receipt-data": "\#(last.receiptData)", "exclude-old-transactions": "true"}"#.utf8)
            let lenient = try await h.store.verifyReceipt(body: body, environment: .sandbox)
            #expect(lenient.latestReceiptInfo?.map(\.transactionID) == [last.transactionID])
        }
    }

    // MARK: Refunds

    @Test(arguments: TestDatabase.engines)
    func refundSetsTheCancellationDateOnce(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let refunded = try await h.buy(H.issue)
            let kept = try await h.buy(H.coins)
            h.clock.advance(by: 3600)
            let refundTime = h.clock.now

            let first = try await h.store.refund(SandboxRefundRequest(transactionID: refunded.transactionID))
            #expect(first.transactionID == refunded.transactionID)
            #expect(first.cancellationDate == refundTime)

            h.clock.advance(by: 3600)
            let again = try await h.store.refund(SandboxRefundRequest(transactionID: refunded.transactionID))
            #expect(again.cancellationDate == refundTime, "refunding again keeps the first date")

            let answer = try await h.verify(kept.receiptData)
            let byID = Dictionary(uniqueKeysWithValues: H.inApp(answer).map { ($0.transactionID, $0) })
            #expect(byID[refunded.transactionID]?.cancellationDate == refundTime)
            #expect(byID[refunded.transactionID]?.cancellationReason == 0)
            #expect(byID[kept.transactionID]?.cancellationDate == nil)
            #expect(byID[kept.transactionID]?.cancellationReason == nil)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func refundedSubscriptionShowsInLatestReceiptInfo(engine: KioskDatabase.Engine) async throws {
        try await H.with(engine) { h in
            let month = try await h.buy(H.monthly)
            _ = try await h.store.refund(SandboxRefundRequest(transactionID: month.transactionID))
            let answer = try await h.verify(month.receiptData)
            #expect(answer.latestReceiptInfo?.first?.cancellationDate == h.clock.now)
        }
    }

    @Test(arguments: TestDatabase.engines, ["2000000000000000", "", "not-a-transaction"])
    func refundOfAnUnknownTransactionIsNotFound(engine: KioskDatabase.Engine, transactionID: String) async throws {
        try await H.with(engine) { h in
            _ = try await h.buy(H.issue)
            await expectError(.notFound) {
                try await h.store.refund(SandboxRefundRequest(transactionID: transactionID))
            }
        }
    }
}

// MARK: - Ledger

enum LedgerTestFixtures {
    static func transaction(
        _ id: String, product: String = "com.example.issue", purchase: Date = ServerTestFixtures.november2026,
        expires: Date? = nil, cancelled: Date? = nil, quantity: Int = 1,
        verified: Date = ServerTestFixtures.november2026
    ) -> LedgerTransaction {
        LedgerTransaction(
            transactionID: id, originalTransactionID: "orig-\(id)", productID: product, environment: "Sandbox",
            bundleID: "com.example.kiosk", purchaseDate: purchase, expiresDate: expires, cancellationDate: cancelled,
            quantity: quantity, verifiedAt: verified)
    }

    /// Runs `body` with a ledger over a fresh database on `engine`, and that database.
    static func withLedger(
        _ engine: KioskDatabase.Engine, _ body: (SQLLedger, KioskDatabase) async throws -> Void
    ) async throws {
        try await TestDatabase.with(engine) { database in try await body(SQLLedger(database: database), database) }
    }
}

@Suite("SQL ledger")
struct SQLLedgerTests {
    typealias F = LedgerTestFixtures

    @Test(arguments: TestDatabase.engines)
    func recordingTwiceIsIdempotent(engine: KioskDatabase.Engine) async throws {
        try await F.withLedger(engine) { ledger, _ in
            #expect(try await ledger.count() == 0)
            let transaction = F.transaction("1")
            try await ledger.record([transaction])
            try await ledger.record([transaction])
            #expect(try await ledger.count() == 1)
            #expect(try await ledger.transaction(id: "1") == transaction)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func recordingAgainUpdatesWhatMayChange(engine: KioskDatabase.Engine) async throws {
        try await F.withLedger(engine) { ledger, _ in
            let start = ServerTestFixtures.november2026
            try await ledger.record([F.transaction("1", expires: start.addingTimeInterval(100))])
            let cancelled = start.addingTimeInterval(50.5)
            let reverified = start.addingTimeInterval(3600)
            var update = F.transaction(
                "1", expires: start.addingTimeInterval(200), cancelled: cancelled, quantity: 2, verified: reverified)
            // Fields that identify the purchase are not rewritten.
            update.productID = "com.example.other"
            update.purchaseDate = start.addingTimeInterval(-1)
            try await ledger.record([update])

            #expect(try await ledger.count() == 1)
            let stored = try #require(try await ledger.transaction(id: "1"))
            #expect(stored.cancellationDate == cancelled)
            #expect(stored.expiresDate == start.addingTimeInterval(200))
            #expect(stored.quantity == 2)
            #expect(stored.verifiedAt == reverified)
            #expect(stored.productID == "com.example.issue")
            #expect(stored.purchaseDate == start)
            #expect(stored.originalTransactionID == "orig-1")
        }
    }

    @Test(arguments: TestDatabase.engines)
    func countAndLookUp(engine: KioskDatabase.Engine) async throws {
        try await F.withLedger(engine) { ledger, database in
            try await ledger.record([])
            #expect(try await ledger.count() == 0)
            try await ledger.record([F.transaction("1"), F.transaction("2"), F.transaction("3")])
            try await ledger.record([F.transaction("3"), F.transaction("4")])
            #expect(try await ledger.count() == 4)
            #expect(try await ledger.transaction(id: "4")?.transactionID == "4")
            #expect(try await ledger.transaction(id: "5") == nil)
            #expect(try await ledger.transaction(id: "") == nil)

            // Opening the database again (its migrations run again) keeps the rows.
            let reopened = try await KioskDatabase.open(database.url, logger: TestDatabase.logger)
            let count = try? await SQLLedger(database: reopened).count()
            try await reopened.close()
            #expect(count == 4)
        }
    }

    @Test(arguments: TestDatabase.engines)
    func datesKeepMillisecondPrecision(engine: KioskDatabase.Engine) async throws {
        try await F.withLedger(engine) { ledger, _ in
            let purchase = Date(timeIntervalSince1970: 1_793_491_200.123)
            try await ledger.record([F.transaction("ms", purchase: purchase)])
            let stored = try #require(try await ledger.transaction(id: "ms"))
            #expect(stored.purchaseDate.millisecondsSince1970 == 1_793_491_200_123)
            #expect(abs(stored.purchaseDate.timeIntervalSince(purchase)) < 0.001)
        }
    }
}

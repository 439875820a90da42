import Crypto
import Foundation
import KioskCore
import KioskStore
import SQLKit

/// The built-in store of the embedded default: it sells the catalog's products to named sandbox users, issues signed
/// receipts, answers Apple's `verifyReceipt` contract from its own records, and takes refunds.
///
/// With a ``SandboxSigningAuthority`` it also signs each purchase as a StoreKit 2 transaction and sends App Store
/// Server Notifications V2 about its own records (refund, revocation, refund reversal, renewal, expiry, grace
/// period, consumption request).
///
/// Its records and keys live in the server's database (`sandbox_purchases` and `sandbox_keys`, created by
/// ``SchemaMigrations``), so purchases survive a restart, and a purchase made at one instance is known at every
/// instance sharing the database. Each change that reads before it writes runs as one database transaction.
public struct SandboxStore: Sendable {
    let database: KioskDatabase
    private let signingKey: SymmetricKey
    let catalog: ContentCatalog
    let bundleID: String
    private let sharedSecret: String?
    let authority: SandboxSigningAuthority?
    let now: @Sendable () -> Date
    /// The App Store Server API key its API accepts (``SandboxAppStoreAPI``): a sandbox-mode server signs its API
    /// requests with it unless it is given another.
    public let apiKey: AppStoreAPIKey

    private init(
        database: KioskDatabase, signingKey: SymmetricKey, catalog: ContentCatalog, bundleID: String,
        sharedSecret: String?, authority: SandboxSigningAuthority?, apiKey: AppStoreAPIKey,
        now: @escaping @Sendable () -> Date
    ) {
        self.apiKey = apiKey
        self.database = database
        self.signingKey = signingKey
        self.catalog = catalog
        self.bundleID = bundleID
        self.sharedSecret = sharedSecret
        self.authority = authority
        self.now = now
    }

    /// Opens the store over `database`, with its receipt signing key from the database (generated on first use, or
    /// adopted from the file an earlier release kept in `dataDirectory`).
    public static func open(
        database: KioskDatabase, dataDirectory: URL, catalog: ContentCatalog, bundleID: String,
        sharedSecret: String?, signingAuthority: SandboxSigningAuthority? = nil,
        now: @escaping @Sendable () -> Date = Date.init
    ) async throws -> SandboxStore {
        let key = try await SandboxKeys.loadOrCreate(
            SandboxKeys.receiptKey.name, in: database.sql,
            adopting: dataDirectory.appendingPathComponent(SandboxKeys.receiptKey.legacyFile)
        ) { SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) } }
        guard key.count == 32 else {
            throw SecretFile.Failure(
                description: "the sandbox receipt key in the database is not 32 bytes; delete its row of "
                    + "sandbox_keys to generate a new one")
        }
        let apiKey = try await SandboxKeys.loadOrCreateAPIKey(in: database.sql, bundleID: bundleID)
        return SandboxStore(
            database: database, signingKey: SymmetricKey(data: key), catalog: catalog, bundleID: bundleID,
            sharedSecret: sharedSecret, authority: signingAuthority, apiKey: apiKey, now: now)
    }

    // MARK: Purchases

    /// Buys `request.productID` for a sandbox user and returns the user's new receipt.
    ///
    /// A non-consumable the user already owns is not bought twice (the existing transaction is returned, as the App
    /// Store restores it); buying an auto-renewable subscription that is still running renews it from its expiry.
    public func purchase(_ request: SandboxPurchaseRequest) async throws -> SandboxPurchaseResponse {
        guard Identifiers.isValidProductID(request.productID) else {
            throw SandboxRefusal.invalidProductID(request.productID)
        }
        guard let product = catalog.snapshot.products[request.productID] else {
            throw SandboxRefusal.productNotSold(request.productID)
        }
        let user = request.user ?? "default"
        guard Self.isValidUser(user) else {
            throw SandboxRefusal.invalidUser
        }
        let quantity = request.quantity ?? 1
        guard (1...100).contains(quantity) else { throw SandboxRefusal.invalidQuantity }
        guard quantity == 1 || product.info.type == .consumable else {
            throw SandboxRefusal.quantityOfNonConsumable
        }
        let now = now()
        let productID = request.productID
        let type = product.info.type
        let period = product.info.subscriptionPeriod ?? SubscriptionPeriod(iso8601: "P1M")!
        // One transaction reads the user's history and inserts: two purchases at once (at two instances) cannot both
        // buy a non-consumable or renew a subscription from the same expiry.
        let row = try await database.transaction { session in
            let history = try await Self.purchases(ofUser: user, in: session).filter { $0.product_id == productID }
            let row: PurchaseRow
            switch type {
            case .nonConsumable:
                if let owned = history.first(where: { $0.cancellation_date_ms == nil }) { return owned }
                row = PurchaseRow(user: user, productID: productID, quantity: 1, purchase: now, expires: nil)
            case .autoRenewable:
                let running = history.filter { $0.cancellation_date_ms == nil }
                    .max { ($0.expires_date_ms ?? 0) < ($1.expires_date_ms ?? 0) }
                if let running, let expiry = running.expires_date_ms, expiry > now.millisecondsSince1970 {
                    let start = Date(milliseconds: expiry)
                    row = PurchaseRow(
                        user: user, productID: productID, quantity: 1, purchase: start,
                        expires: period.end(from: start), originalTransactionID: running.original_transaction_id)
                } else {
                    row = PurchaseRow(
                        user: user, productID: productID, quantity: 1, purchase: now, expires: period.end(from: now))
                }
            case .nonRenewing:
                row = PurchaseRow(
                    user: user, productID: productID, quantity: 1, purchase: now, expires: period.end(from: now))
            case .consumable:
                row = PurchaseRow(user: user, productID: productID, quantity: quantity, purchase: now, expires: nil)
            }
            return try await Self.insert(row, in: session)
        }
        return try await response(for: row, user: user)
    }

    /// Marks a transaction refunded; refunding it again keeps the first cancellation date.
    public func refund(_ request: SandboxRefundRequest) async throws -> SandboxRefundResponse {
        let now = now()
        let row = try await database.transaction { session in
            try await Self.refund(request.transactionID, at: now, in: session)
        }
        guard let row, let cancelled = row.cancellation_date_ms else {
            throw SandboxRefusal.unknownTransaction(request.transactionID)
        }
        return SandboxRefundResponse(transactionID: row.transaction_id, cancellationDate: Date(milliseconds: cancelled))
    }

    /// Refunds `transactionID` at `date` unless it was refunded before (the first date stays); the row after, nil
    /// when there is none.
    private static func refund(
        _ transactionID: String, at date: Date, in session: any SQLDatabase
    ) async throws -> PurchaseRow? {
        try await session.update("sandbox_purchases")
            .set("cancellation_date_ms", to: date.millisecondsSince1970)
            .set("modified_seq", to: try await nextModification(in: session))
            .where("transaction_id", .equal, transactionID)
            .where("cancellation_date_ms", .is, SQLLiteral.null)
            .run()
        return try await purchase(transactionID: transactionID, in: session)
    }

    // MARK: Notifications

    /// Changes a purchase as `request.kind` says and returns the App Store Server Notification V2 announcing it
    /// (a `signedPayload`), signed by the sandbox chain. The notification is kept for the notification history,
    /// delivered unless `request.deliver` is `false` (the caller delivers it).
    public func notification(for request: SandboxNotificationRequest) async throws -> String {
        guard let authority else { throw SandboxRefusal.noSigningChain }
        let now = now()
        let products = catalog.snapshot.products
        return try await database.transaction { session in
            let change = try await Self.apply(request, at: now, products: products, in: session)
            let payload = NotificationPayload(
                notificationType: change.type, subtype: change.subtype,
                notificationUUID: UUID().uuidString.lowercased(), signedDate: now,
                data: NotificationPayload.Body(
                    bundleId: bundleID, environment: "Sandbox",
                    signedTransactionInfo: try authority.sign(signedTransaction(for: change.subject, signedDate: now)),
                    signedRenewalInfo: try change.renewal.map { try authority.sign($0) },
                    consumptionRequestReason: change.consumptionRequestReason))
            let signed = try authority.sign(payload)
            try await SentNotification.record(
                payload, signed: signed, about: change.subject.original_transaction_id,
                delivered: request.deliver ?? true, in: session)
            return signed
        }
    }

    /// The consumption answers the sandbox store's App Store Server API received about the transaction
    /// `transactionID` (``SandboxAppStoreAPI``), oldest first.
    /// - Throws: ``SandboxRefusal/unknownTransaction(_:)`` for a transaction the store does not have.
    public func consumptionAnswers(for transactionID: String) async throws -> SandboxConsumptionAnswers {
        let sql = database.sql
        guard try await Self.purchase(transactionID: transactionID, in: sql) != nil else {
            throw SandboxRefusal.unknownTransaction(transactionID)
        }
        let rows = try await sql.select().column("body").column("received_at_ms").from("sandbox_consumption_answers")
            .where("transaction_id", .equal, transactionID)
            .orderBy("answer_id")
            .all(decoding: ConsumptionAnswerRow.self)
        return SandboxConsumptionAnswers(
            transactionID: transactionID,
            answers: try rows.map { row in
                // The API stored only bodies that decoded.
                let body = try JSONDecoder().decode(AppStoreConsumptionRequest.self, from: Data(row.body.utf8))
                return SandboxConsumptionAnswers.Answer(
                    receivedAt: Date(milliseconds: row.received_at_ms), customerConsented: body.customerConsented,
                    consumptionPercentage: body.consumptionPercentage, deliveryStatus: body.deliveryStatus.rawValue,
                    refundPreference: body.refundPreference?.rawValue,
                    sampleContentProvided: body.sampleContentProvided)
            })
    }

    /// A row of `sandbox_consumption_answers`, the columns read.
    private struct ConsumptionAnswerRow: Codable {
        var body: String
        var received_at_ms: Int64
    }

    /// What a notification announces: its type and subtype, the transaction it carries and the renewal info.
    private struct NotifiedChange: Sendable {
        var type: String
        var subtype: String?
        var subject: PurchaseRow
        var renewal: JWSRenewalInfo?
        var consumptionRequestReason: String?
    }

    /// Changes the purchase `request` names as its kind says, inside the running transaction `session`.
    private static func apply(
        _ request: SandboxNotificationRequest, at now: Date, products: [String: CatalogProduct],
        in session: any SQLDatabase
    ) async throws -> NotifiedChange {
        guard let row = try await purchase(transactionID: request.transactionID, in: session) else {
            throw SandboxRefusal.unknownTransaction(request.transactionID)
        }
        switch request.kind {
        case .consumptionRequest:
            return NotifiedChange(
                type: "CONSUMPTION_REQUEST", subject: row, consumptionRequestReason: "UNINTENDED_PURCHASE")
        case .refund, .revoke:
            let refunded = try await refund(row.transaction_id, at: now, in: session) ?? row
            return NotifiedChange(type: request.kind == .refund ? "REFUND" : "REVOKE", subject: refunded)
        case .refundReversed:
            guard row.cancellation_date_ms != nil else {
                throw SandboxRefusal.notRefunded(transactionID: row.transaction_id)
            }
            try await session.update("sandbox_purchases").set("cancellation_date_ms", to: SQLLiteral.null)
                .set("modified_seq", to: try await nextModification(in: session))
                .where("transaction_id", .equal, row.transaction_id).run()
            var subject = row
            subject.cancellation_date_ms = nil
            return NotifiedChange(type: "REFUND_REVERSED", subject: subject)
        case .renew:
            let (latest, period) = try await latestPeriod(of: row, products: products, in: session)
            let start = max(Date(milliseconds: latest.expires_date_ms ?? now.millisecondsSince1970), now)
            let subject = try await insert(
                PurchaseRow(
                    user: latest.user_name, productID: latest.product_id, quantity: 1, purchase: start,
                    expires: period.end(from: start), originalTransactionID: latest.original_transaction_id),
                in: session)
            return NotifiedChange(type: "DID_RENEW", subject: subject)
        case .expire, .gracePeriod:
            var (latest, _) = try await latestPeriod(of: row, products: products, in: session)
            let ended = min(latest.expires_date_ms ?? now.millisecondsSince1970, now.millisecondsSince1970)
            try await session.update("sandbox_purchases").set("expires_date_ms", to: ended)
                .set("modified_seq", to: try await nextModification(in: session))
                .where("transaction_id", .equal, latest.transaction_id).run()
            latest.expires_date_ms = ended
            if request.kind == .expire {
                return NotifiedChange(type: "EXPIRED", subtype: "VOLUNTARY", subject: latest)
            }
            let days = request.graceDays ?? 16
            guard (1...60).contains(days) else { throw SandboxRefusal.invalidGraceDays }
            let renewal = JWSRenewalInfo(
                originalTransactionId: latest.original_transaction_id, productId: latest.product_id,
                autoRenewStatus: 1, gracePeriodExpiresDate: now.addingTimeInterval(TimeInterval(days) * 86_400),
                isInBillingRetryPeriod: true, signedDate: now, environment: "Sandbox")
            return NotifiedChange(type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", subject: latest, renewal: renewal)
        }
    }

    /// The subscription's latest paid period (of the chain `row` belongs to) and its product's period length.
    private static func latestPeriod(
        of row: PurchaseRow, products: [String: CatalogProduct], in session: any SQLDatabase
    ) async throws -> (PurchaseRow, SubscriptionPeriod) {
        guard let product = products[row.product_id], product.info.type == .autoRenewable else {
            throw SandboxRefusal.notAutoRenewable(transactionID: row.transaction_id)
        }
        let chain = try await session.select().column("*").from("sandbox_purchases")
            .where("original_transaction_id", .equal, row.original_transaction_id)
            .where("cancellation_date_ms", .is, SQLLiteral.null)
            .all(decoding: PurchaseRow.self)
        guard let latest = chain.max(by: { ($0.expires_date_ms ?? 0) < ($1.expires_date_ms ?? 0) }) else {
            throw SandboxRefusal.subscriptionRefunded(transactionID: row.transaction_id)
        }
        return (latest, product.info.subscriptionPeriod ?? SubscriptionPeriod(iso8601: "P1M")!)
    }

    /// A purchase as StoreKit 2 shows it.
    func signedTransaction(for row: PurchaseRow, signedDate: Date) -> JWSTransaction {
        let type: String? =
            switch catalog.snapshot.products[row.product_id]?.info.type {
            case .consumable?: "Consumable"
            case .nonConsumable?: "Non-Consumable"
            case .autoRenewable?: "Auto-Renewable Subscription"
            case .nonRenewing?: "Non-Renewing Subscription"
            case nil: nil
            }
        return JWSTransaction(
            transactionId: row.transaction_id, originalTransactionId: row.original_transaction_id, bundleId: bundleID,
            productId: row.product_id, purchaseDate: Date(milliseconds: row.purchase_date_ms),
            expiresDate: row.expires_date_ms.map(Date.init(milliseconds:)), quantity: row.quantity, type: type,
            signedDate: signedDate, revocationDate: row.cancellation_date_ms.map(Date.init(milliseconds:)),
            revocationReason: row.cancellation_date_ms == nil ? nil : 0, environment: "Sandbox")
    }

    // MARK: verifyReceipt

    /// Answers a `verifyReceipt` request body as Apple's endpoint for `environment` would: the sandbox store's
    /// receipts are sandbox receipts, so the production endpoint answers 21007.
    public func verifyReceipt(body: Data, environment: StoreEnvironment) async throws -> AppleVerifyReceiptResponse {
        guard let request = try? JSONDecoder().decode(AppleVerifyReceiptRequest.self, from: body) else {
            return AppleVerifyReceiptResponse(status: 21000)
        }
        guard let receipt = SandboxReceipt.decode(request.receiptData, signingKey: signingKey),
            receipt.bundleID == bundleID
        else { return AppleVerifyReceiptResponse(status: 21002) }
        if let sharedSecret, request.password != sharedSecret {
            return AppleVerifyReceiptResponse(status: 21004)
        }
        guard environment == .sandbox else { return AppleVerifyReceiptResponse(status: 21007) }
        let all = try await purchases(ofUser: receipt.user)
        let listed = Set(receipt.transactionIDs)
        let inApp = all.filter { listed.contains($0.transaction_id) }.map(\.appleTransaction)
        let subscriptionProducts = Set(
            catalog.snapshot.products.values.filter { $0.info.type == .autoRenewable }.map(\.info.productID))
        var latest = all.filter { subscriptionProducts.contains($0.product_id) }
            .sorted { $0.purchase_date_ms > $1.purchase_date_ms }
        if request.excludeOldTransactions == true {
            var seen = Set<String>()
            latest = latest.filter { seen.insert($0.original_transaction_id).inserted }
        }
        let now = now()
        let appReceipt = AppleAppReceipt(
            receiptType: "ProductionSandbox", bundleID: bundleID, applicationVersion: "1",
            originalApplicationVersion: "1.0", creationDate: Date(milliseconds: receipt.createdAt), requestDate: now,
            inApp: inApp)
        let fresh = SandboxReceipt(
            bundleID: bundleID, user: receipt.user, createdAt: now.millisecondsSince1970,
            transactionIDs: all.map(\.transaction_id))
        return AppleVerifyReceiptResponse(
            status: 0, environment: .sandbox, receipt: .app(appReceipt),
            latestReceiptInfo: latest.isEmpty ? nil : latest.map(\.appleTransaction),
            latestReceipt: try fresh.encoded(signingKey: signingKey))
    }

    // MARK: Records

    private func response(for row: PurchaseRow, user: String) async throws -> SandboxPurchaseResponse {
        let all = try await purchases(ofUser: user)
        let receipt = SandboxReceipt(
            bundleID: bundleID, user: user, createdAt: now().millisecondsSince1970,
            transactionIDs: all.map(\.transaction_id))
        return SandboxPurchaseResponse(
            receiptData: try receipt.encoded(signingKey: signingKey), transactionID: row.transaction_id,
            originalTransactionID: row.original_transaction_id, productID: row.product_id,
            purchaseDate: Date(milliseconds: row.purchase_date_ms),
            expiresDate: row.expires_date_ms.map(Date.init(milliseconds:)),
            signedTransaction: try authority?.sign(signedTransaction(for: row, signedDate: now())))
    }

    private func purchases(ofUser user: String) async throws -> [PurchaseRow] {
        try await Self.purchases(ofUser: user, in: database.sql)
    }

    static func purchases(ofUser user: String, in session: any SQLDatabase) async throws -> [PurchaseRow] {
        try await session.select().column("*").from("sandbox_purchases")
            .where("user_name", .equal, user)
            .orderBy("purchase_date_ms")
            .all(decoding: PurchaseRow.self)
    }

    static func purchase(transactionID: String, in session: any SQLDatabase) async throws -> PurchaseRow? {
        try await session.select().column("*").from("sandbox_purchases")
            .where("transaction_id", .equal, transactionID)
            .first(decoding: PurchaseRow.self)
    }

    private static func isValidUser(_ user: String) -> Bool {
        !user.isEmpty && user.utf8.count <= 64
            && user.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._@-".unicodeScalars.contains($0))
            }
    }

    /// Stores a new purchase as the latest change (``nextModification(in:)``) and returns it as stored.
    private static func insert(_ row: PurchaseRow, in session: any SQLDatabase) async throws -> PurchaseRow {
        var row = row
        row.modified_seq = try await nextModification(in: session)
        try await session.insert(into: "sandbox_purchases").model(row).run()
        return row
    }

    /// The number of the next change to a purchase: one more than the latest. Changes run in serializable
    /// transactions, so no two get the same number, and a change committed later never gets a lower one.
    private static func nextModification(in session: any SQLDatabase) async throws -> Int64 {
        let latest = try await session.raw("SELECT MAX(modified_seq) AS latest FROM sandbox_purchases")
            .first(decodingColumn: "latest", as: Int64?.self)
        return ((latest ?? nil) ?? 0) + 1
    }

    /// A row of `sandbox_purchases`, named as the columns are.
    struct PurchaseRow: Codable, Sendable {
        var transaction_id: String
        var original_transaction_id: String
        var user_name: String
        var product_id: String
        var quantity: Int
        var purchase_date_ms: Int64
        var expires_date_ms: Int64?
        var cancellation_date_ms: Int64?
        /// When it last changed, in the order of changes (``SandboxStore/nextModification(in:)``).
        var modified_seq: Int64

        init(
            user: String, productID: String, quantity: Int, purchase: Date, expires: Date?,
            originalTransactionID: String? = nil
        ) {
            let id = Self.newTransactionID()
            transaction_id = id
            original_transaction_id = originalTransactionID ?? id
            user_name = user
            product_id = productID
            self.quantity = quantity
            purchase_date_ms = purchase.millisecondsSince1970
            expires_date_ms = expires?.millisecondsSince1970
            cancellation_date_ms = nil
            modified_seq = 0
        }

        /// A 16-digit transaction ID in the style of Apple's sandbox (`2000000…`).
        static func newTransactionID() -> String {
            "2" + String(UInt64.random(in: 100_000_000_000_000..<1_000_000_000_000_000))
        }

        var appleTransaction: AppleTransaction {
            AppleTransaction(
                productID: product_id, transactionID: transaction_id, originalTransactionID: original_transaction_id,
                purchaseDate: Date(milliseconds: purchase_date_ms),
                expiresDate: expires_date_ms.map(Date.init(milliseconds:)),
                cancellationDate: cancellation_date_ms.map(Date.init(milliseconds:)),
                cancellationReason: cancellation_date_ms == nil ? nil : 0, quantity: quantity)
        }
    }
}

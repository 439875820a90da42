import Foundation
import KioskCore
import KioskStore
import SQLKit

/// The App Store Server API as the sandbox store serves it, from its own records, so that everything Kiosk asks
/// Apple runs offline: under `/sandbox/api` over HTTP (the sandbox environment), and in process for a sandbox-mode
/// server that was given no other API URL (``SandboxAppStoreAPITransport``).
///
/// - `GET /inApps/v1/transactions/{transactionId}`: the purchase, signed now.
/// - `GET /inApps/v2/history/{transactionId}`: every purchase of the customer (the sandbox user) who made that one,
///   in the order they last changed (bought, refunded, reversed, expired), ``historyPageSize`` a page, with a
///   `revision` that a later call passes back to get only what changed since.
/// - `POST /inApps/v1/notifications/history`: the notifications the sandbox store sent (delivered or not),
///   ``notificationPageSize`` a page; a `startDate` more than 180 days back is refused with 4000012, as Apple does.
/// - `PUT /inApps/v2/transactions/consumption/{transactionId}`: consumption information, checked as Apple documents
///   it and recorded (``SandboxStore/consumptionAnswers(for:)``); 202.
///
/// Every request must carry a bearer token of the sandbox store's key (``SandboxAPITokenCheck``); 401 otherwise. The
/// production environment knows none of the sandbox's transactions (404, 4040010) and sent no notification.
public struct SandboxAppStoreAPI: Sendable {
    /// One request, its path after the API's base (such as `/inApps/v1/transactions/2000…`).
    struct Request: Sendable {
        var method: String
        var path: String
        var query: [String: String]
        var authorization: String?
        var body: Data
        var environment: StoreEnvironment
    }

    /// How many transactions a history page holds: small, so that clients page (Apple's is 20).
    public static let historyPageSize = 4
    /// How many notifications a notification history page holds.
    public static let notificationPageSize = 4
    /// How far back a notification history may start.
    static let notificationHistoryReach: TimeInterval = 180 * 86_400

    let store: SandboxStore
    private let tokens: SandboxAPITokenCheck

    /// The API of `store`, accepting tokens of its ``SandboxStore/apiKey``.
    init(store: SandboxStore) {
        self.store = store
        self.tokens = SandboxAPITokenCheck(key: store.apiKey)
    }

    /// The answer to `request`, as Apple's API would give it.
    func answer(_ request: Request) async -> AppStoreAPIHTTPResponse {
        guard tokens.accepts(authorization: request.authorization, now: store.now()) else {
            return AppStoreAPIHTTPResponse(status: 401)
        }
        let segments = request.path.split(separator: "/").map(String.init)
        let environment = request.environment
        do {
            switch request.method {
            case "GET":
                if let id = Self.id(in: segments, after: ["inApps", "v1", "transactions"]) {
                    return try await transaction(id, environment: environment)
                }
                if let id = Self.id(in: segments, after: ["inApps", "v2", "history"]) {
                    return try await history(of: id, revision: request.query["revision"], environment: environment)
                }
            case "POST" where segments == ["inApps", "v1", "notifications", "history"]:
                return try await notificationHistory(
                    request.body, token: request.query["paginationToken"], environment: environment)
            case "PUT":
                if let id = Self.id(in: segments, after: ["inApps", "v2", "transactions", "consumption"]) {
                    return try await consumption(request.body, for: id, environment: environment)
                }
            default: break
            }
            return Self.error(status: 404, code: 4_040_000, "Not found.")
        } catch {
            return Self.error(status: 500, code: 5_000_000, "An unknown error occurred.")
        }
    }

    // MARK: Calls

    private func transaction(_ id: String, environment: StoreEnvironment) async throws -> AppStoreAPIHTTPResponse {
        guard let row = try await purchase(id, environment: environment) else { return Self.transactionNotFound }
        let signed = try signer().sign(store.signedTransaction(for: row, signedDate: store.now()))
        return try Self.json(AppStoreTransactionInfoResponse(signedTransactionInfo: signed))
    }

    private func history(
        of id: String, revision: String?, environment: StoreEnvironment
    ) async throws -> AppStoreAPIHTTPResponse {
        var after = HistoryPosition.start
        if let revision {
            guard let position = HistoryPosition(revision: revision) else {
                return Self.error(status: 400, code: 4_000_005, "Invalid request revision.")
            }
            after = position
        }
        guard let row = try await purchase(id, environment: environment) else { return Self.transactionNotFound }
        let page = try await store.database.sql.select().column("*").from("sandbox_purchases")
            .where("user_name", .equal, row.user_name)
            .where { group in
                group.where("modified_seq", .greaterThan, after.sequence)
                    .orWhere { tie in
                        tie.where("modified_seq", .equal, after.sequence)
                            .where("transaction_id", .greaterThan, after.transactionID)
                    }
            }
            .orderBy("modified_seq").orderBy("transaction_id")
            .limit(Self.historyPageSize + 1)
            .all(decoding: SandboxStore.PurchaseRow.self)
        let shown = page.prefix(Self.historyPageSize)
        let signer = try signer()
        let now = store.now()
        let last = shown.last.map { HistoryPosition(sequence: $0.modified_seq, transactionID: $0.transaction_id) }
        return try Self.json(
            AppStoreHistoryResponse(
                revision: (last ?? after).revision, hasMore: page.count > Self.historyPageSize,
                bundleId: store.bundleID, environment: environment.rawValue,
                signedTransactions: try shown.map { try signer.sign(store.signedTransaction(for: $0, signedDate: now)) }
            ))
    }

    private func notificationHistory(
        _ body: Data, token: String?, environment: StoreEnvironment
    ) async throws -> AppStoreAPIHTTPResponse {
        guard let request = try? JSONDecoder().decode(AppStoreNotificationHistoryRequest.self, from: body) else {
            return Self.error(status: 400, code: 4_000_000, "Invalid request.")
        }
        let now = store.now()
        guard request.startDate >= now.addingTimeInterval(-Self.notificationHistoryReach).millisecondsSince1970 else {
            return Self.error(
                status: 400, code: 4_000_012, "Invalid request. The start date is earlier than the allowed start date.")
        }
        guard request.endDate > request.startDate else {
            return Self.error(status: 400, code: 4_000_013, "Invalid request. The end date precedes the start date.")
        }
        var after: Int64 = 0
        if let token {
            guard let sequence = Int64(token), sequence >= 0 else {
                return Self.error(status: 400, code: 4_000_014, "Invalid request. The pagination token is invalid.")
            }
            after = sequence
        }
        guard environment == .sandbox else {
            return try Self.json(
                AppStoreNotificationHistoryResponse(
                    paginationToken: nil, hasMore: false,
                    notificationHistory: []))
        }
        var originals: [String]?
        if let id = request.transactionId {
            guard let row = try await purchase(id, environment: environment) else { return Self.transactionNotFound }
            originals = try await SandboxStore.purchases(ofUser: row.user_name, in: store.database.sql)
                .map(\.original_transaction_id)
        }
        let page = try await SentNotification.page(
            signedFrom: request.startDate, to: request.endDate, after: after, limit: Self.notificationPageSize + 1,
            originals: originals, type: request.notificationType, onlyFailures: request.onlyFailures ?? false,
            in: store.database.sql)
        let shown = page.prefix(Self.notificationPageSize)
        let hasMore = page.count > Self.notificationPageSize
        return try Self.json(
            AppStoreNotificationHistoryResponse(
                paginationToken: hasMore ? shown.last.map { String($0.sequence) } : nil, hasMore: hasMore,
                notificationHistory: shown.map(\.historyItem)))
    }

    private func consumption(
        _ body: Data, for id: String, environment: StoreEnvironment
    ) async throws -> AppStoreAPIHTTPResponse {
        guard let answer = try? JSONDecoder().decode(AppStoreConsumptionRequest.self, from: body) else {
            return Self.error(status: 400, code: 4_000_000, "Invalid request.")
        }
        guard answer.customerConsented else {
            return Self.error(
                status: 400, code: 4_000_035, "Invalid request. The customer consented field is required.")
        }
        if let percentage = answer.consumptionPercentage, !(0...100_000).contains(percentage) {
            return Self.error(status: 400, code: 4_000_000, "Invalid request. The consumption percentage is invalid.")
        }
        if answer.refundPreference == .grantProrated, (answer.consumptionPercentage ?? 0) == 0 {
            return Self.error(
                status: 400, code: 4_000_000, "Invalid request. A prorated refund needs a consumption percentage.")
        }
        guard let row = try await purchase(id, environment: environment) else { return Self.transactionNotFound }
        try await store.database.sql.insert(into: "sandbox_consumption_answers")
            .columns("transaction_id", "body", "received_at_ms")
            .values(
                SQLBind(row.transaction_id), SQLBind(String(decoding: body, as: UTF8.self)),
                SQLBind(store.now().millisecondsSince1970)
            )
            .run()
        return AppStoreAPIHTTPResponse(status: 202)
    }

    // MARK: Helpers

    /// The last segment of `segments` when the others are `prefix`.
    private static func id(in segments: [String], after prefix: [String]) -> String? {
        guard segments.count == prefix.count + 1, segments.starts(with: prefix) else { return nil }
        return segments.last
    }

    /// The sandbox purchase `id`; none in production, which knows no sandbox transaction.
    private func purchase(_ id: String, environment: StoreEnvironment) async throws -> SandboxStore.PurchaseRow? {
        guard environment == .sandbox else { return nil }
        return try await SandboxStore.purchase(transactionID: id, in: store.database.sql)
    }

    private func signer() throws -> SandboxSigningAuthority {
        guard let authority = store.authority else { throw SandboxRefusal.noSigningChain }
        return authority
    }

    private static let transactionNotFound = error(status: 404, code: 4_040_010, "Transaction id not found.")

    private static func error(status: Int, code: Int, _ message: String) -> AppStoreAPIHTTPResponse {
        let body = (try? JSONEncoder().encode(AppStoreAPIErrorBody(errorCode: code, errorMessage: message))) ?? Data()
        return AppStoreAPIHTTPResponse(status: status, headers: ["content-type": "application/json"], body: body)
    }

    private static func json(_ value: some Encodable) throws -> AppStoreAPIHTTPResponse {
        AppStoreAPIHTTPResponse(
            status: 200, headers: ["content-type": "application/json"], body: try JSONEncoder().encode(value))
    }
}

/// Where a history page ends: the last purchase shown, by (change number, transaction ID). A revision is its opaque
/// form.
private struct HistoryPosition: Sendable {
    /// Before every purchase.
    static let start = HistoryPosition(sequence: -1, transactionID: "")

    var sequence: Int64
    var transactionID: String

    init(sequence: Int64, transactionID: String) {
        self.sequence = sequence
        self.transactionID = transactionID
    }

    /// The position a revision names; nil for one the sandbox did not make.
    init?(revision: String) {
        guard let data = Base64URL.decode(revision), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let sequence = Int64(parts[0]), sequence >= -1 else { return nil }
        self.init(sequence: sequence, transactionID: parts[1])
    }

    var revision: String { Base64URL.encode(Data("\(sequence):\(transactionID)".utf8)) }
}

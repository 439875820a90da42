import Foundation
import KioskStore

/// The App Store Server API calls Kiosk makes, typed: each sends through the ``AppStoreAPIClient`` (bearer JWT,
/// retries), decodes Apple's JSON, and verifies every signed datum in the answer like a signed transaction (chain to
/// a configured root, bundle, environment) before returning it.
///
/// Throws ``AppStoreAPIFailure`` when the call fails, ``AppStoreAPIAnswerError`` when the answer does not decode or
/// lacks what the call needs, and ``SignedDataRefusal`` when a signed datum in it does not verify.
public struct AppStoreServerAPI: Sendable {
    /// One page of a customer's transaction history.
    public struct HistoryPage: Sendable {
        /// The page's transactions, verified, oldest modification first.
        public var transactions: [JWSTransaction]
        /// Where the next page starts (and, after the last, where a later read resumes).
        public var revision: String?
        /// Whether another page follows.
        public var hasMore: Bool
    }

    /// One page of the notifications the App Store sent.
    public struct NotificationPage: Sendable {
        /// The notifications' `signedPayload`s, not yet verified (the processor verifies them as if posted).
        public var signedPayloads: [String]
        /// The token of the next page, when there is one.
        public var paginationToken: String?
        /// Whether another page follows.
        public var hasMore: Bool
    }

    /// Sends the requests.
    public let client: AppStoreAPIClient
    /// Verifies the signed data in the answers.
    public let verifier: SignedDataVerifier

    /// Calls through `client`, verifying answers with `verifier`.
    public init(client: AppStoreAPIClient, verifier: SignedDataVerifier) {
        self.client = client
        self.verifier = verifier
    }

    /// `GET /inApps/v2/history/{transactionId}`: the page of the customer's history after `revision` (from the
    /// start when nil), in ascending modification order.
    public func history(
        of transactionID: String, after revision: String?, environment: StoreEnvironment
    ) async throws -> HistoryPage {
        var query = [URLQueryItem(name: "sort", value: "ASCENDING")]
        if let revision { query.append(URLQueryItem(name: "revision", value: revision)) }
        let body = try await client.send(
            "GET", path: "/inApps/v2/history/\(try Self.pathSegment(transactionID))", query: query,
            environment: environment)
        let answer = try Self.decode(AppStoreHistoryResponse.self, from: body, call: "transaction history")
        var transactions: [JWSTransaction] = []
        for jws in answer.signedTransactions ?? [] {
            transactions.append(try await verifier.verifyTransaction(jws))
        }
        return HistoryPage(transactions: transactions, revision: answer.revision, hasMore: answer.hasMore ?? false)
    }

    /// `GET /inApps/v1/transactions/{transactionId}`: the transaction as the App Store knows it now.
    public func transaction(_ transactionID: String, environment: StoreEnvironment) async throws -> JWSTransaction {
        let body = try await client.send(
            "GET", path: "/inApps/v1/transactions/\(try Self.pathSegment(transactionID))", environment: environment)
        let answer = try Self.decode(AppStoreTransactionInfoResponse.self, from: body, call: "transaction info")
        guard let jws = answer.signedTransactionInfo else {
            throw AppStoreAPIAnswerError(call: "transaction info", problem: "no signedTransactionInfo")
        }
        return try await verifier.verifyTransaction(jws)
    }

    /// `POST /inApps/v1/notifications/history`: the page `paginationToken` names (the first when nil) of the
    /// notifications `request` asks for.
    public func notificationHistory(
        _ request: AppStoreNotificationHistoryRequest, paginationToken: String?, environment: StoreEnvironment
    ) async throws -> NotificationPage {
        let query = paginationToken.map { [URLQueryItem(name: "paginationToken", value: $0)] } ?? []
        let body = try await client.send(
            "POST", path: "/inApps/v1/notifications/history", query: query,
            body: try JSONEncoder().encode(request), environment: environment)
        let answer = try Self.decode(AppStoreNotificationHistoryResponse.self, from: body, call: "notification history")
        let hasMore = answer.hasMore ?? false
        guard !hasMore || answer.paginationToken != nil else {
            throw AppStoreAPIAnswerError(call: "notification history", problem: "hasMore without a paginationToken")
        }
        return NotificationPage(
            signedPayloads: (answer.notificationHistory ?? []).compactMap(\.signedPayload),
            paginationToken: answer.paginationToken, hasMore: hasMore)
    }

    /// `PUT /inApps/v2/transactions/consumption/{transactionId}`: answers a `CONSUMPTION_REQUEST`.
    public func sendConsumption(
        _ consumption: AppStoreConsumptionRequest, for transactionID: String, environment: StoreEnvironment
    ) async throws {
        _ = try await client.send(
            "PUT", path: "/inApps/v2/transactions/consumption/\(try Self.pathSegment(transactionID))",
            body: try JSONEncoder().encode(consumption), environment: environment)
    }

    /// A transaction ID as a path segment: Apple's are digits; anything else is refused before it is sent.
    static func pathSegment(_ transactionID: String) throws(AppStoreAPIAnswerError) -> String {
        guard !transactionID.isEmpty, transactionID.utf8.count <= 64,
            transactionID.utf8.allSatisfy({ (0x30...0x39).contains($0) })
        else { throw AppStoreAPIAnswerError(call: "request", problem: "a transaction ID that is not digits") }
        return transactionID
    }

    private static func decode<T: Decodable>(
        _ type: T.Type, from body: Data, call: String
    ) throws(AppStoreAPIAnswerError) -> T {
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch {
            throw AppStoreAPIAnswerError(call: call, problem: "the answer is not the documented JSON")
        }
    }
}

/// An App Store Server API answer that could not be used: not the documented JSON, or without what the call needs.
public struct AppStoreAPIAnswerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call, such as `transaction history`.
    public var call: String
    /// What is wrong with its answer.
    public var problem: String

    /// What went wrong, in a sentence.
    public var description: String { "the App Store Server API's \(call) answer could not be used: \(problem)" }
}

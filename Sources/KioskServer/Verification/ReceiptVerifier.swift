import Foundation
import KioskCore
import KioskStore

/// Verifies receipts with the store, following Apple's `verifyReceipt` contract.
///
/// Runs a ``ReceiptVerificationStateMachine`` per verification (production first, sandbox on `21007`,
/// backoff and retry on transient failures), caches successful results by the SHA-256 of the receipt for
/// `cacheTTL`, and coalesces concurrent verifications of the same receipt into one series of store calls.
///
/// ```swift
/// let verifier = ReceiptVerifier(transport: transport, sharedSecret: secret)
/// let receipt = try await verifier.verify(receiptData: base64)
/// ```
///
/// A caller that is cancelled still waits for the store calls it may share with other callers; their number
/// and duration are bounded by `maxAttempts`, `requestTimeout` and the backoff.
public actor ReceiptVerifier {
    /// The longest receipt accepted: 3 MiB of base64 text, as Apple.
    public static let maximumReceiptLength = 3 * 1024 * 1024
    /// Apple's production endpoint.
    public static let appleProductionURL = URL(string: "https://buy.itunes.apple.com/verifyReceipt")!
    /// Apple's sandbox endpoint.
    public static let appleSandboxURL = URL(string: "https://sandbox.itunes.apple.com/verifyReceipt")!

    private let client: StoreClient
    private let sharedSecret: String?
    private let excludeOldTransactions: Bool
    private let configuration: ReceiptVerificationStateMachine.Configuration
    private let now: @Sendable () -> Date
    private var jitter: JitterSource
    private var cache: ReceiptCache
    private var inFlight: [Data: Task<Result<VerifiedReceipt, ReceiptVerificationError>, Never>] = [:]
    private var hits = 0
    private var misses = 0
    private var coalesced = 0

    /// Creates a verifier.
    ///
    /// - Parameters:
    ///   - transport: Sends the requests.
    ///   - productionURL: The production `verifyReceipt` endpoint.
    ///   - sandboxURL: The sandbox `verifyReceipt` endpoint.
    ///   - sharedSecret: The app's shared secret, sent as `password`; `nil` or empty to send none.
    ///   - excludeOldTransactions: Sent as `exclude-old-transactions`.
    ///   - environments: The environments whose receipts are accepted; a receipt from another one fails with
    ///     `environmentNotAccepted`, and is never answered from the cache.
    ///   - requestTimeout: The timeout of each store call.
    ///   - maxAttempts: How many store calls may fail transiently per verification.
    ///   - backoff: The waits between those calls.
    ///   - cacheTTL: How long a successful result is reused; `.zero` disables the cache.
    ///   - cacheCapacity: The most results cached; the oldest are evicted first.
    ///   - jitter: The random source of the backoff jitter; `.seeded(_:)` in tests.
    ///   - now: The wall clock of the cache.
    ///   - sleep: Waits out a backoff; tests pass one that returns at once.
    ///   - onStoreCall: Told about every store call, for metrics; called off the actor, must not block.
    public init(
        transport: any StoreTransport,
        productionURL: URL = ReceiptVerifier.appleProductionURL,
        sandboxURL: URL = ReceiptVerifier.appleSandboxURL,
        sharedSecret: String? = nil,
        excludeOldTransactions: Bool = false,
        environments: Set<StoreEnvironment> = Set(StoreEnvironment.allCases),
        requestTimeout: Duration = .seconds(10),
        maxAttempts: Int = 4,
        backoff: ExponentialBackoff = ExponentialBackoff(),
        cacheTTL: Duration = .seconds(60),
        cacheCapacity: Int = 10_000,
        jitter: JitterSource = .system,
        now: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        onStoreCall: (@Sendable (StoreCallReport) -> Void)? = nil
    ) {
        self.client = StoreClient(
            transport: transport,
            productionURL: productionURL,
            sandboxURL: sandboxURL,
            requestTimeout: requestTimeout,
            sleep: sleep,
            onStoreCall: onStoreCall
        )
        self.sharedSecret = sharedSecret?.isEmpty == false ? sharedSecret : nil
        self.excludeOldTransactions = excludeOldTransactions
        self.configuration = ReceiptVerificationStateMachine.Configuration(
            maxAttempts: maxAttempts, backoff: backoff, environments: environments)
        self.now = now
        self.jitter = jitter
        self.cache = ReceiptCache(capacity: cacheCapacity, timeToLive: cacheTTL)
    }

    /// How the cache has served so far.
    public var cacheStatistics: ReceiptCacheStatistics {
        ReceiptCacheStatistics(
            hits: hits, misses: misses, coalesced: coalesced, evictions: cache.evictions, entries: cache.count
        )
    }

    /// Forgets every cached result, so that the next verification of any receipt asks the store: used when the
    /// server learns that a transaction changed (a refund in the sandbox store).
    public func invalidateCache() { cache.removeAll() }

    /// Verifies a base64-encoded receipt with the store.
    ///
    /// Fails with `payloadTooLarge` (over 3 MiB) or `receiptMalformed(status: nil)` (empty, not base64) before
    /// any store call; otherwise with what the store's answers lead to.
    public func verify(receiptData: String) async throws(ReceiptVerificationError) -> VerifiedReceipt {
        let payload = try ReceiptPayload(validating: receiptData, maximumLength: Self.maximumReceiptLength)
        if let cached = cache.receipt(for: payload.digest, now: now()) {
            hits += 1
            return cached
        }
        if let running = inFlight[payload.digest] {
            coalesced += 1
            return try await running.value.get()
        }
        misses += 1

        let body = try requestBody(for: payload)
        let machine = ReceiptVerificationStateMachine(configuration: configuration, jitter: jitter.fork())
        let client = self.client
        let task = Task { await client.run(body: body, machine: machine) }
        inFlight[payload.digest] = task
        let result = await task.value
        inFlight[payload.digest] = nil
        if case .success(let receipt) = result { cache.insert(receipt, for: payload.digest, now: now()) }
        return try result.get()
    }

    private func requestBody(for payload: ReceiptPayload) throws(ReceiptVerificationError) -> Data {
        let request = AppleVerifyReceiptRequest(
            receiptData: payload.base64, password: sharedSecret, excludeOldTransactions: excludeOldTransactions
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        do {
            return try encoder.encode(request)
        } catch {
            // Unreachable: the request holds only strings and a Boolean.
            throw .receiptMalformed(status: nil)
        }
    }
}

/// How a ``ReceiptVerifier``'s cache has served, for metrics.
public struct ReceiptCacheStatistics: Sendable, Hashable {
    /// Verifications answered from the cache.
    public var hits: Int
    /// Verifications that called the store.
    public var misses: Int
    /// Verifications that joined one already calling the store for the same receipt.
    public var coalesced: Int
    /// Results evicted to make room.
    public var evictions: Int
    /// Results currently held.
    public var entries: Int

    /// Creates statistics.
    public init(hits: Int = 0, misses: Int = 0, coalesced: Int = 0, evictions: Int = 0, entries: Int = 0) {
        self.hits = hits
        self.misses = misses
        self.coalesced = coalesced
        self.evictions = evictions
        self.entries = entries
    }
}

/// The I/O half of a verification: performs a state machine's actions against the store.
private struct StoreClient: Sendable {
    let transport: any StoreTransport
    let productionURL: URL
    let sandboxURL: URL
    let requestTimeout: Duration
    let sleep: @Sendable (Duration) async throws -> Void
    let onStoreCall: (@Sendable (StoreCallReport) -> Void)?

    /// Drives `machine` to its end.
    func run(
        body: Data, machine: ReceiptVerificationStateMachine
    ) async -> Result<VerifiedReceipt, ReceiptVerificationError> {
        var machine = machine
        var action = machine.start()
        while true {
            switch action {
            case .post(let environment):
                action = await post(body, to: environment, machine: &machine)
            case .backoff(let delay, then: _):
                do {
                    try await sleep(delay)
                } catch {
                    // Cancelled while waiting: give up as the store being unavailable.
                    return .failure(
                        .storeUnavailable(
                            retryAfter: .seconds(delay.retryAfterSeconds), status: nil))
                }
                action = machine.backoffElapsed()
            case .succeed(let response, let environment):
                guard let receipt = VerifiedReceipt(response: response, environment: environment) else {
                    // Unreachable: the machine only succeeds with answers that carry a receipt.
                    return .failure(.receiptMalformed(status: response.status))
                }
                return .success(receipt)
            case .fail(let error):
                return .failure(error)
            }
        }
    }

    private func post(
        _ body: Data, to environment: StoreEnvironment, machine: inout ReceiptVerificationStateMachine
    ) async -> ReceiptVerificationStateMachine.Action {
        let url = environment == .production ? productionURL : sandboxURL
        let clock = ContinuousClock()
        let start = clock.now
        let response: StoreHTTPResponse
        do {
            response = try await transport.post(body, to: url, timeout: requestTimeout)
        } catch {
            let isTimeout = (error as? StoreTransportError) == .timeout
            report(environment, .transportFailure(isTimeout: isTimeout), since: start, clock)
            return machine.transportFailed(isTimeout: isTimeout)
        }
        guard (200..<300).contains(response.status) else {
            report(environment, .httpStatus(response.status), since: start, clock)
            return machine.receivedResponse(httpStatus: response.status, body: nil)
        }
        let decoded = try? JSONDecoder().decode(AppleVerifyReceiptResponse.self, from: response.body)
        report(environment, decoded.map { .status($0.status) } ?? .undecodable, since: start, clock)
        return machine.receivedResponse(httpStatus: response.status, body: decoded)
    }

    private func report(
        _ environment: StoreEnvironment, _ outcome: StoreCallReport.Outcome, since start: ContinuousClock.Instant,
        _ clock: ContinuousClock
    ) {
        onStoreCall?(StoreCallReport(environment: environment, outcome: outcome, duration: clock.now - start))
    }
}

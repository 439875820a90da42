import Foundation
import KioskCore
import KioskServer
import KioskStore
import KioskStoreTestSupport
import Testing

@Suite("Receipt verifier")
struct ReceiptVerifierTests {
    typealias F = VerificationFixtures

    static let production = URL(string: "https://store.test/production/verifyReceipt")!
    static let sandbox = URL(string: "https://store.test/sandbox/verifyReceipt")!

    /// A verifier wired to fakes, and the fakes.
    struct Harness {
        let verifier: ReceiptVerifier
        let transport: VerificationScriptedTransport
        let sleeper: VerificationSleepRecorder
        let clock: VerificationManualClock
        let reports: VerificationReportCollector

        init(
            _ steps: [VerificationScriptedTransport.Step],
            sharedSecret: String? = "s3cret",
            excludeOldTransactions: Bool = false,
            cacheCapacity: Int = 100,
            maxAttempts: Int = 4
        ) {
            let transport = VerificationScriptedTransport(steps)
            let sleeper = VerificationSleepRecorder()
            let clock = VerificationManualClock()
            let reports = VerificationReportCollector()
            self.transport = transport
            self.sleeper = sleeper
            self.clock = clock
            self.reports = reports
            self.verifier = ReceiptVerifier(
                transport: transport,
                productionURL: ReceiptVerifierTests.production,
                sandboxURL: ReceiptVerifierTests.sandbox,
                sharedSecret: sharedSecret,
                excludeOldTransactions: excludeOldTransactions,
                requestTimeout: .seconds(7),
                maxAttempts: maxAttempts,
                cacheTTL: .seconds(60),
                cacheCapacity: cacheCapacity,
                jitter: .seeded(2024),
                now: { clock.now },
                sleep: { await sleeper.sleep($0) },
                onStoreCall: { reports.append($0) }
            )
        }
    }

    @Test("A sandbox receipt is tried at production, then sandbox, with the shared secret")
    func urlsAndPassword() async throws {
        let harness = Harness([.answer(F.failure(21007)), .answer(F.success(environment: .sandbox))])
        let receipt = try await harness.verifier.verify(receiptData: F.receipt())
        #expect(receipt.environment == .sandbox)
        #expect(receipt.bundleID == F.bundleID)
        #expect(await harness.transport.urls == [Self.production, Self.sandbox])

        let calls = await harness.transport.calls
        for call in calls {
            let request = try #require(call.request)
            #expect(
                request
                    == AppleVerifyReceiptRequest(
                        receiptData: F.receipt(), password: "s3cret", excludeOldTransactions: false
                    ))
            #expect(call.timeout == .seconds(7))
        }
        #expect(harness.reports.reports.map(\.environment) == [.production, .sandbox])
        #expect(harness.reports.reports.map(\.outcome.label) == ["21007", "0"])
        #expect(await harness.sleeper.durations.isEmpty)
    }

    @Test("Without a shared secret no password is sent; exclude-old-transactions is passed on")
    func noPassword() async throws {
        for secret in [nil, ""] as [String?] {
            let harness = Harness([.answer(F.success())], sharedSecret: secret, excludeOldTransactions: true)
            _ = try await harness.verifier.verify(receiptData: F.receipt())
            let call = try #require(await harness.transport.calls.first)
            let object = try #require(try JSONSerialization.jsonObject(with: call.body) as? [String: Any])
            #expect(object["password"] == nil)
            #expect(object["exclude-old-transactions"] as? Bool == true)
        }
    }

    @Test("A receipt over 3 MiB is refused before any store call; exactly 3 MiB is sent")
    func sizeLimit() async throws {
        let harness = Harness([.answer(F.success())])
        let limit = 3 * 1024 * 1024
        #expect(ReceiptVerifier.maximumReceiptLength == limit)
        await #expect(throws: ReceiptVerificationError.payloadTooLarge) {
            try await harness.verifier.verify(receiptData: String(repeating: "A", count: limit + 1))
        }
        #expect(await harness.transport.calls.isEmpty)

        _ = try await harness.verifier.verify(receiptData: String(repeating: "A", count: limit))
        #expect(await harness.transport.calls.count == 1)
    }

    @Test(
        "Empty or non-base64 receipts are refused before any store call",
        arguments: ["", "   \n", "not base64!", "TUlJ===", "TU=J", "TUl", "TUlJ-_", "TUlJ\u{00E9}"]
    )
    func malformed(receiptData: String) async {
        let harness = Harness([])
        await #expect(throws: ReceiptVerificationError.receiptMalformed(status: nil)) {
            try await harness.verifier.verify(receiptData: receiptData)
        }
        #expect(await harness.transport.calls.isEmpty)
    }

    @Test("Whitespace and line breaks are removed before sending and caching")
    func whitespace() async throws {
        let harness = Harness([.answer(F.success())])
        let base64 = F.receipt()
        let wrapped = "  " + base64.prefix(8) + "\r\n" + base64.dropFirst(8) + "\n"
        _ = try await harness.verifier.verify(receiptData: wrapped)
        _ = try await harness.verifier.verify(receiptData: base64)
        let calls = await harness.transport.calls
        #expect(calls.count == 1)
        #expect(calls.first?.request?.receiptData == base64)
    }

    @Test("A verified receipt is served from the cache until the TTL passes")
    func caching() async throws {
        let harness = Harness([.answer(F.success()), .answer(F.success())])
        let first = try await harness.verifier.verify(receiptData: F.receipt())
        harness.clock.advance(by: 59)
        let second = try await harness.verifier.verify(receiptData: F.receipt())
        #expect(first == second)
        #expect(await harness.transport.calls.count == 1)
        #expect(await harness.verifier.cacheStatistics == ReceiptCacheStatistics(hits: 1, misses: 1, entries: 1))

        harness.clock.advance(by: 2)
        _ = try await harness.verifier.verify(receiptData: F.receipt())
        #expect(await harness.transport.calls.count == 2)
        #expect(await harness.verifier.cacheStatistics == ReceiptCacheStatistics(hits: 1, misses: 2, entries: 1))
    }

    @Test("Failures are not cached")
    func failuresNotCached() async {
        let harness = Harness([.answer(F.failure(21003)), .answer(F.failure(21003))])
        for _ in 0..<2 {
            await #expect(throws: ReceiptVerificationError.receiptInvalid(status: 21003)) {
                try await harness.verifier.verify(receiptData: F.receipt())
            }
        }
        #expect(await harness.transport.calls.count == 2)
    }

    @Test("The cache keeps at most its capacity, evicting the oldest")
    func eviction() async throws {
        let harness = Harness(Array(repeating: .answer(F.success()), count: 4), cacheCapacity: 2)
        for seed in 0..<3 { _ = try await harness.verifier.verify(receiptData: F.receipt(seed)) }
        #expect(await harness.verifier.cacheStatistics.evictions == 1)
        #expect(await harness.verifier.cacheStatistics.entries == 2)
        _ = try await harness.verifier.verify(receiptData: F.receipt(2))  // still cached
        #expect(await harness.transport.calls.count == 3)
        _ = try await harness.verifier.verify(receiptData: F.receipt(0))  // evicted
        #expect(await harness.transport.calls.count == 4)
    }

    @Test("Concurrent verifications of one receipt share one store call")
    func coalescing() async throws {
        let harness = Harness([.answer(F.success())])
        await harness.transport.hold()
        async let first = harness.verifier.verify(receiptData: F.receipt())
        try await waitUntil { await harness.transport.heldCount == 1 }
        async let second = harness.verifier.verify(receiptData: F.receipt())
        try await waitUntil { await harness.verifier.cacheStatistics.coalesced == 1 }
        await harness.transport.release()

        let (a, b) = try await (first, second)
        #expect(a == b)
        #expect(await harness.transport.calls.count == 1)
        #expect(await harness.verifier.cacheStatistics == ReceiptCacheStatistics(misses: 1, coalesced: 1, entries: 1))
    }

    @Test("Many simultaneous verifications of one receipt make one store call")
    func coalescingUnderLoad() async throws {
        let harness = Harness([.answer(F.success())])
        let verifier: any ReceiptVerifying = harness.verifier
        try await withThrowingTaskGroup(of: VerifiedReceipt.self) { group in
            for _ in 0..<50 { group.addTask { try await verifier.verify(receiptData: F.receipt()) } }
            let receipts = try await group.reduce(into: []) { $0.append($1) }
            #expect(Set(receipts).count == 1)
        }
        #expect(await harness.transport.calls.count == 1)
        let statistics = await harness.verifier.cacheStatistics
        #expect(statistics.misses == 1)
        #expect(statistics.hits + statistics.coalesced == 49)
    }

    @Test("Transient failures are retried after the injected sleep")
    func retries() async throws {
        let harness = Harness([
            .http(503, Data("<html>busy</html>".utf8)), .timeout, .http(200, Data("{".utf8)),
            .answer(F.success()),
        ])
        let receipt = try await harness.verifier.verify(receiptData: F.receipt())
        #expect(receipt.environment == .production)
        #expect(await harness.transport.urls == Array(repeating: Self.production, count: 4))
        let durations = await harness.sleeper.durations
        #expect(durations.count == 3)
        for (retry, duration) in durations.enumerated() {
            let ceiling = ExponentialBackoff().ceiling(forRetry: retry + 1)
            #expect(duration >= ceiling / 2 && duration <= ceiling)
        }
        #expect(harness.reports.reports.map(\.outcome.label) == ["http_503", "timeout", "undecodable", "0"])
    }

    @Test("When every attempt fails the verifier reports store_unavailable with a Retry-After")
    func exhausted() async {
        let harness = Harness([.networkFailure, .http(502, Data()), .http(500, Data()), .http(503, Data())])
        await #expect(throws: ReceiptVerificationError.storeUnavailable(retryAfter: .seconds(2), status: nil)) {
            try await harness.verifier.verify(receiptData: F.receipt())
        }
        #expect(await harness.transport.calls.count == 4)
        #expect(await harness.sleeper.durations.count == 3)
        #expect(harness.reports.reports.first?.outcome == .transportFailure(isTimeout: false))
    }

    @Test("A wrong shared secret fails at once as store_misconfigured")
    func wrongSecret() async {
        let harness = Harness([.answer(F.failure(21004))])
        await #expect(throws: ReceiptVerificationError.storeMisconfigured(status: 21004)) {
            try await harness.verifier.verify(receiptData: F.receipt())
        }
        #expect(await harness.sleeper.durations.isEmpty)
    }

    @Test("An expired subscription (21006) is a verified receipt")
    func expiredSubscription() async throws {
        let harness = Harness([.answer(try F.decode(F.expiredTransactionReceiptJSON))])
        let receipt = try await harness.verifier.verify(receiptData: F.receipt())
        #expect(receipt.status == 21006)
        #expect(receipt.transactions.count == 2)
    }

    /// Polls `condition`, yielding, until it holds; fails after a generous number of tries.
    private func waitUntil(_ condition: @Sendable () async -> Bool) async throws {
        for _ in 0..<100_000 {
            if await condition() { return }
            await Task.yield()
        }
        Issue.record("Condition never became true")
        throw CancellationError()
    }

    @Test("A receipt from a refused environment is never cached, and the sandbox is never asked")
    func refusedEnvironmentIsNotCached() async throws {
        // Only successes are cached, and a success comes only from an accepted environment: each request asks
        // production again and is refused again.
        let transport = VerificationScriptedTransport([
            .answer(F.failure(21007)), .answer(F.failure(21007)),
        ])
        let verifier = ReceiptVerifier(
            transport: transport, productionURL: Self.production, sandboxURL: Self.sandbox,
            environments: [.production], cacheTTL: .seconds(60), sleep: { _ in })
        for _ in 0..<2 {
            await #expect(throws: ReceiptVerificationError.environmentNotAccepted(.sandbox)) {
                _ = try await verifier.verify(receiptData: F.receipt())
            }
        }
        #expect(await transport.urls == [Self.production, Self.production], "the sandbox was never asked")
    }
}

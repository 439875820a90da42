import Foundation
import KioskServer
import KioskStore
import KioskStoreTestSupport
import Testing

/// A ``StoreTransport`` that plays a script of answers and records every call.
actor VerificationScriptedTransport: StoreTransport {
    /// One scripted answer.
    enum Step: Sendable {
        case answer(AppleVerifyReceiptResponse)
        case http(Int, Data)
        case timeout
        case networkFailure
    }

    /// A recorded call.
    struct Call: Sendable {
        var url: URL
        var body: Data
        var timeout: Duration

        /// The request as the store would read it.
        var request: AppleVerifyReceiptRequest? {
            try? JSONDecoder().decode(AppleVerifyReceiptRequest.self, from: body)
        }
    }

    private struct NetworkDown: Error {}

    private var steps: [Step]
    private(set) var calls: [Call] = []
    private var isHolding = false
    private var held: [CheckedContinuation<Void, Never>] = []

    init(_ steps: [Step]) { self.steps = steps }

    /// The URLs called, in order.
    var urls: [URL] { calls.map(\.url) }

    /// Calls waiting for ``release()``.
    var heldCount: Int { held.count }

    /// Makes every call wait until ``release()``.
    func hold() { isHolding = true }

    /// Lets the waiting calls, and all later ones, proceed.
    func release() {
        isHolding = false
        for continuation in held { continuation.resume() }
        held.removeAll()
    }

    func post(_ body: Data, to url: URL, timeout: Duration) async throws -> StoreHTTPResponse {
        calls.append(Call(url: url, body: body, timeout: timeout))
        if isHolding { await withCheckedContinuation { held.append($0) } }
        guard !steps.isEmpty else {
            Issue.record("The store was called more often than scripted.")
            return StoreHTTPResponse(status: 500, body: Data())
        }
        switch steps.removeFirst() {
        case .answer(let response): return StoreHTTPResponse(status: 200, body: VerificationFixtures.body(response))
        case .http(let status, let body): return StoreHTTPResponse(status: status, body: body)
        case .timeout: throw StoreTransportError.timeout
        case .networkFailure: throw NetworkDown()
        }
    }
}

/// A sleep that records what it was asked to wait and returns at once.
actor VerificationSleepRecorder {
    private(set) var durations: [Duration] = []

    func sleep(_ duration: Duration) { durations.append(duration) }
}

/// A wall clock the test moves by hand.
final class VerificationManualClock: @unchecked Sendable {  // Sendable: `current` is only touched under `lock`.
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date = VerificationFixtures.november14) { current = start }

    var now: Date { lock.withLock { current } }

    func advance(by seconds: TimeInterval) { lock.withLock { current += seconds } }
}

/// Collects ``StoreCallReport``s.
final class VerificationReportCollector: @unchecked Sendable {  // Sendable: `reports` is only touched under `lock`.
    private let lock = NSLock()
    private var collected: [StoreCallReport] = []

    var reports: [StoreCallReport] { lock.withLock { collected } }

    func append(_ report: StoreCallReport) { lock.withLock { collected.append(report) } }
}

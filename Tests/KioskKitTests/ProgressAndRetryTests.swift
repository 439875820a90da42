import Foundation
import Testing

@testable import KioskKit

@Suite("Progress, backoff, Retry-After")
struct ProgressAndRetryTests {
    @Test func fraction() {
        #expect(DownloadProgress(bytesWritten: 0, bytesExpected: 0).fraction == 0)
        #expect(DownloadProgress(bytesWritten: 25, bytesExpected: 100).fraction == 0.25)
        #expect(DownloadProgress(bytesWritten: 200, bytesExpected: 100).fraction == 1)
    }

    @Test func speedIsUnknownUntilTwoSamples() {
        var estimator = SpeedEstimator()
        #expect(estimator.bytesPerSecond == nil)
        #expect(estimator.timeRemaining(forRemaining: 100) == nil)
        estimator.record(bytes: 0, at: 0)
        #expect(estimator.bytesPerSecond == nil)
        estimator.record(bytes: 1000, at: 1)
        #expect(estimator.bytesPerSecond == 1000)
        #expect(estimator.timeRemaining(forRemaining: 5000) == .seconds(5))
        #expect(estimator.timeRemaining(forRemaining: 0) == .zero)
    }

    @Test func speedIsSmoothed() {
        var estimator = SpeedEstimator(timeConstant: 3)
        estimator.record(bytes: 0, at: 0)
        estimator.record(bytes: 1000, at: 1)  // 1000 B/s
        estimator.record(bytes: 4000, at: 2)  // instant 3000 B/s
        let alpha = 1 - exp(-1.0 / 3)
        let expected = 1000 + alpha * 2000
        #expect(abs(estimator.bytesPerSecond! - expected) < 0.001)
        #expect(estimator.bytesPerSecond! > 1000 && estimator.bytesPerSecond! < 3000)
    }

    @Test func samplesTooCloseAreFolded() {
        var estimator = SpeedEstimator(minimumInterval: 0.05)
        estimator.record(bytes: 0, at: 0)
        estimator.record(bytes: 10, at: 0.01)
        #expect(estimator.bytesPerSecond == nil)
        estimator.record(bytes: 100, at: 0.1)
        #expect(abs(estimator.bytesPerSecond! - 1000) < 0.001)
    }

    @Test func idleTimeBeforeTheFirstBytesIsNotCounted() {
        var estimator = SpeedEstimator()
        estimator.record(bytes: 500, at: 0)
        estimator.record(bytes: 500, at: 10)  // connecting, re-hashing the part file…
        estimator.record(bytes: 1500, at: 11)
        #expect(estimator.bytesPerSecond == 1000)
    }

    @Test func stalledTransferHasNoTimeRemaining() {
        var estimator = SpeedEstimator()
        estimator.record(bytes: 0, at: 0)
        estimator.record(bytes: 100, at: 1)
        estimator.record(bytes: 100, at: 100)
        #expect(estimator.bytesPerSecond! < 1)
        estimator.reset()
        estimator.record(bytes: 0, at: 0)
        estimator.record(bytes: 0, at: 1)
        #expect(estimator.bytesPerSecond == nil)
        #expect(estimator.timeRemaining(forRemaining: 10) == nil)
    }

    @Test func restartedCountStartsANewMeasurement() {
        var estimator = SpeedEstimator()
        estimator.record(bytes: 0, at: 0)
        estimator.record(bytes: 1000, at: 1)
        estimator.record(bytes: 10, at: 2)
        #expect(estimator.bytesPerSecond == 1000)
        estimator.record(bytes: 1010, at: 3)
        #expect(estimator.bytesPerSecond! > 0)
    }

    @Test func exponentialBackoffWithJitter() {
        let policy = RetryPolicy(baseDelay: 1, maximumDelay: 8)
        #expect(policy.delay(attempt: 1, random: 0) == 0.5)
        #expect(policy.delay(attempt: 1, random: 1) == 1)
        #expect(policy.delay(attempt: 2, random: 1) == 2)
        #expect(policy.delay(attempt: 3, random: 0.5) == 3)
        #expect(policy.delay(attempt: 4, random: 1) == 8)
        #expect(policy.delay(attempt: 10, random: 1) == 8)  // capped
        #expect(policy.delay(attempt: 200, random: 1) == 8)  // no overflow
        for attempt in 1...6 {
            let delay = policy.delay(attempt: attempt, random: Double.random(in: 0...1))
            let cap = min(8, pow(2, Double(attempt - 1)))
            #expect(delay >= cap / 2 && delay <= cap)
        }
    }

    @Test func retryAfterWins() {
        let policy = RetryPolicy(baseDelay: 1, maximumDelay: 8)
        #expect(policy.delay(attempt: 1, retryAfter: 30, random: 0) == 30)
        #expect(policy.delay(attempt: 1, retryAfter: 1000, random: 0) == 80)
    }

    /// #15: a server cannot park a download for days with a huge `Retry-After`, whatever the policy allows.
    @Test func retryAfterIsCappedAtOneHour() {
        let patient = RetryPolicy(baseDelay: 1, maximumDelay: 86_400)
        #expect(patient.delay(attempt: 1, retryAfter: 1_000_000_000, random: 0) == 3600)
        #expect(RetryAfter.seconds(from: "999999999999") == 3600)
        let now = Date(timeIntervalSince1970: 1_445_412_480)
        #expect(RetryAfter.seconds(from: "Fri, 01 Jan 2100 00:00:00 GMT", now: now) == 3600)
    }

    @Test func retryAfterParsing() {
        let now = Date(timeIntervalSince1970: 1_445_412_480)  // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(RetryAfter.seconds(from: "120") == 120)
        #expect(RetryAfter.seconds(from: " 0 ") == 0)
        #expect(RetryAfter.seconds(from: "Wed, 21 Oct 2015 07:28:30 GMT", now: now) == 30)
        #expect(RetryAfter.seconds(from: "Wed, 21 Oct 2015 07:27:00 GMT", now: now) == 0)
        #expect(RetryAfter.seconds(from: nil) == nil)
        #expect(RetryAfter.seconds(from: "") == nil)
        #expect(RetryAfter.seconds(from: "-5") == nil)
        #expect(RetryAfter.seconds(from: "soon") == nil)
        #expect(RetryAfter.seconds(from: "1.5") == nil)
        #expect(RetryAfter.seconds(from: "99999999999999999999") == nil)
    }

    @Test func errorClassification() {
        #expect(KioskError.network(code: 1, underlying: "x").isTransient)
        #expect(KioskError.server(status: 503, code: "store_unavailable", message: "", retryAfter: 2).isTransient)
        #expect(KioskError.server(status: 429, code: "too_many_requests", message: "", retryAfter: nil).isTransient)
        #expect(KioskError.server(status: 500, code: "internal_error", message: "", retryAfter: nil).isTransient)
        let notEntitled = KioskError.server(status: 403, code: "not_entitled", message: "", retryAfter: nil)
        #expect(!notEntitled.isTransient)
        #expect(notEntitled.isEntitlementRefusal)
        #expect(notEntitled.apiCode == .notEntitled)
        #expect(!KioskError.server(status: 404, code: "not_found", message: "", retryAfter: nil).isTransient)
        #expect(KioskError.server(status: 401, code: "token_expired", message: "", retryAfter: nil).needsNewGrant)
        #expect(KioskError.server(status: 410, code: "version_gone", message: "", retryAfter: nil).needsNewGrant)
        #expect(!KioskError.insufficientStorage(needed: 1, available: 0).isTransient)
    }

    @Test func serverErrorsAreDecodedFromTheEnvelope() {
        let body = Data(#"{"error":{"code":"not_entitled","message":"Refunded."}}"#.utf8)
        let error = KioskError.fromResponse(status: 403, body: body, retryAfter: nil)
        #expect(error == .server(status: 403, code: "not_entitled", message: "Refunded.", retryAfter: nil))
        #expect(error.description.contains("Refunded."))
        let html = KioskError.fromResponse(status: 502, body: Data("<html>".utf8), retryAfter: 3)
        #expect(html.code == "server_error")
        #expect(html.isTransient)
    }

    @Test func errorsHaveMessagesAndRoundTrip() throws {
        let errors: [KioskError] = [
            .server(status: 403, code: "not_entitled", message: "m", retryAfter: nil),
            .integrity(productID: "p", path: "a", expectedSHA256: "x", actualSHA256: "y"),
            .insufficientStorage(needed: 10, available: 2), .insufficientStorage(needed: 10, available: nil),
            .network(code: 1, underlying: "u"), .invalidResponse("r"), .journal("j"),
            .fileSystem(path: "p", underlying: "u"), .notFound(productID: "p"), .cancelled(productID: "p"),
            .invalidArgument("a"), .waitCancelled(productID: "p"), .downloadInProgress(productID: "p"),
        ]
        for error in errors {
            #expect(!error.description.isEmpty)
            #expect(!error.code.isEmpty)
            let data = try JSONEncoder().encode(error)
            #expect(try JSONDecoder().decode(KioskError.self, from: data) == error)
        }
    }
}

import Foundation
import KioskCore
import KioskServer
import KioskStore
import KioskStoreTestSupport
import Testing

@Suite("Receipt verification state machine")
struct ReceiptVerificationStateMachineTests {
    typealias Machine = ReceiptVerificationStateMachine
    typealias F = VerificationFixtures

    /// What the first answer from production leads to.
    enum Expectation: Sendable, CustomTestStringConvertible {
        case succeed
        case post(StoreEnvironment)
        case backoff
        case fail(ReceiptVerificationError)

        var testDescription: String {
            switch self {
            case .succeed: "succeed"
            case .post(let environment): "post to \(environment.rawValue)"
            case .backoff: "back off"
            case .fail(let error): "fail with \(error.errorCode.rawValue) \(error.storeStatus.map(String.init) ?? "")"
            }
        }
    }

    static let statusTable: [(Int, Expectation)] = [
        (0, .succeed),
        (21000, .fail(.storeMisconfigured(status: 21000))),
        (21001, .fail(.storeMisconfigured(status: 21001))),
        (21002, .post(.sandbox)),
        (21003, .fail(.receiptInvalid(status: 21003))),
        (21004, .fail(.storeMisconfigured(status: 21004))),
        (21005, .fail(.storeUnavailable(retryAfter: .seconds(1), status: 21005))),
        (21006, .succeed),
        (21007, .post(.sandbox)),
        (21008, .fail(.receiptInvalid(status: 21008))),
        (21009, .fail(.storeUnavailable(retryAfter: .seconds(1), status: 21009))),
        (21010, .fail(.receiptInvalid(status: 21010))),
        (21100, .fail(.storeUnavailable(retryAfter: .seconds(1), status: 21100))),
        (21150, .fail(.storeUnavailable(retryAfter: .seconds(1), status: 21150))),
        (21199, .fail(.storeUnavailable(retryAfter: .seconds(1), status: 21199))),
        (21200, .fail(.receiptInvalid(status: 21200))),
        (21011, .fail(.receiptInvalid(status: 21011))),
        (12345, .fail(.receiptInvalid(status: 12345))),
        (-1, .fail(.receiptInvalid(status: -1))),
    ]

    @Test("Each status from production, without a retry flag", arguments: statusTable)
    func statusFromProduction(status: Int, expected: Expectation) {
        var machine = Machine(jitter: .seeded(1))
        #expect(machine.start() == .post(.production))
        let body = (status == 0 || status == 21006) ? F.success(status: status) : F.failure(status)
        let action = machine.receivedResponse(httpStatus: 200, body: body)
        switch expected {
        case .succeed: #expect(action == .succeed(body, .production))
        case .post(let environment): #expect(action == .post(environment))
        case .backoff: Issue.record("No row expects a backoff")
        case .fail(let error): #expect(action == .fail(error))
        }
        #expect(machine.isFinished == (expected.isTerminal))
    }

    static let retryableStatuses = [21005, 21009, 21100, 21150, 21199]
    static let retryFlagSpellings = ["is_retryable", "is-retryable"]

    @Test(
        "Retryable statuses retry the same environment when the flag, in either spelling, is true",
        arguments: retryableStatuses, retryFlagSpellings
    )
    func retryFlagTrue(status: Int, spelling: String) throws {
        let body = try F.decode(#"{"status": \#(status), "\#(spelling)": true}"#)
        var machine = Machine(jitter: .seeded(7))
        _ = machine.start()
        let action = machine.receivedResponse(httpStatus: 200, body: body)
        guard case .backoff(let delay, then: .production) = action else {
            Issue.record("Expected a backoff, got \(action)")
            return
        }
        #expect(delay >= .milliseconds(125) && delay <= .milliseconds(250))
        #expect(machine.backoffElapsed() == .post(.production))
    }

    @Test(
        "Retryable statuses fail as store_unavailable when the flag, in either spelling, is false",
        arguments: retryableStatuses, retryFlagSpellings
    )
    func retryFlagFalse(status: Int, spelling: String) throws {
        let body = try F.decode(#"{"status": \#(status), "\#(spelling)": false}"#)
        var machine = Machine(jitter: .seeded(7))
        _ = machine.start()
        #expect(
            machine.receivedResponse(httpStatus: 200, body: body)
                == .fail(.storeUnavailable(retryAfter: .seconds(1), status: status))
        )
    }

    @Test("21007 from production goes to sandbox, which succeeds")
    func sandboxReceipt() {
        var machine = Machine()
        _ = machine.start()
        #expect(machine.receivedResponse(httpStatus: 200, body: F.failure(21007)) == .post(.sandbox))
        let answer = F.success(environment: .sandbox)
        #expect(machine.receivedResponse(httpStatus: 200, body: answer) == .succeed(answer, .sandbox))
    }

    @Test("21008 from sandbox goes to production")
    func productionReceiptAtSandbox() {
        var machine = Machine()
        _ = machine.start()
        #expect(machine.receivedResponse(httpStatus: 200, body: F.failure(21002)) == .post(.sandbox))
        #expect(machine.receivedResponse(httpStatus: 200, body: F.failure(21008)) == .post(.production))
        let answer = F.success()
        #expect(machine.receivedResponse(httpStatus: 200, body: answer) == .succeed(answer, .production))
    }

    @Test("A redirect ping-pong fails as receipt_invalid")
    func pingPong() {
        var machine = Machine()
        _ = machine.start()
        #expect(machine.receivedResponse(httpStatus: 200, body: F.failure(21007)) == .post(.sandbox))
        #expect(
            machine.receivedResponse(httpStatus: 200, body: F.failure(21008)) == .fail(.receiptInvalid(status: 21008)))
        #expect(machine.isFinished)
    }

    @Test("21007 from sandbox is not followed")
    func sandboxSaysSandbox() {
        var machine = Machine()
        _ = machine.start()
        #expect(machine.receivedResponse(httpStatus: 200, body: F.failure(21007)) == .post(.sandbox))
        #expect(
            machine.receivedResponse(httpStatus: 200, body: F.failure(21007)) == .fail(.receiptInvalid(status: 21007)))
    }

    @Test("21002 from production is retried once at sandbox, then fails as receipt_malformed")
    func malformedRetriedOnce() {
        var machine = Machine()
        _ = machine.start()
        #expect(machine.receivedResponse(httpStatus: 200, body: F.failure(21002)) == .post(.sandbox))
        #expect(
            machine.receivedResponse(httpStatus: 200, body: F.failure(21002)) == .fail(.receiptMalformed(status: 21002))
        )
    }

    @Test("21002 from production after a sandbox detour fails without another detour")
    func malformedAfterDetour() {
        var machine = Machine()
        _ = machine.start()
        #expect(machine.receivedResponse(httpStatus: 200, body: F.failure(21002)) == .post(.sandbox))
        #expect(machine.receivedResponse(httpStatus: 200, body: F.failure(21008)) == .post(.production))
        #expect(
            machine.receivedResponse(httpStatus: 200, body: F.failure(21002)) == .fail(.receiptMalformed(status: 21002))
        )
    }

    @Test("21002 at sandbox after a 21007 redirect fails as receipt_malformed")
    func malformedAtSandbox() {
        var machine = Machine()
        _ = machine.start()
        #expect(machine.receivedResponse(httpStatus: 200, body: F.failure(21007)) == .post(.sandbox))
        #expect(
            machine.receivedResponse(httpStatus: 200, body: F.failure(21002)) == .fail(.receiptMalformed(status: 21002))
        )
    }

    @Test("HTTP 5xx, 408 and 429 back off and retry the same environment", arguments: [500, 502, 503, 504, 408, 429])
    func serverErrors(httpStatus: Int) {
        var machine = Machine(jitter: .seeded(3))
        _ = machine.start()
        #expect(machine.receivedResponse(httpStatus: 200, body: F.failure(21007)) == .post(.sandbox))
        guard case .backoff(_, then: .sandbox) = machine.receivedResponse(httpStatus: httpStatus, body: nil) else {
            Issue.record("Expected a backoff before retrying sandbox")
            return
        }
        #expect(machine.backoffElapsed() == .post(.sandbox))
    }

    @Test("Other HTTP statuses fail as store_misconfigured", arguments: [400, 401, 403, 404, 405, 301, 302, 100])
    func clientErrors(httpStatus: Int) {
        var machine = Machine()
        _ = machine.start()
        #expect(
            machine.receivedResponse(httpStatus: httpStatus, body: F.failure(0))
                == .fail(.storeMisconfigured(status: nil, httpStatus: httpStatus))
        )
    }

    @Test("Timeouts and network failures back off and retry", arguments: [true, false])
    func transportFailures(isTimeout: Bool) {
        var machine = Machine(jitter: .seeded(3))
        _ = machine.start()
        guard case .backoff(_, then: .production) = machine.transportFailed(isTimeout: isTimeout) else {
            Issue.record("Expected a backoff")
            return
        }
        #expect(machine.backoffElapsed() == .post(.production))
        let answer = F.success()
        #expect(machine.receivedResponse(httpStatus: 200, body: answer) == .succeed(answer, .production))
    }

    @Test("An undecodable 2xx body, or a success without a receipt, backs off and retries")
    func undecodableBodies() {
        var machine = Machine(jitter: .seeded(3))
        _ = machine.start()
        guard case .backoff = machine.receivedResponse(httpStatus: 200, body: nil) else {
            Issue.record("Expected a backoff after an undecodable body")
            return
        }
        #expect(machine.backoffElapsed() == .post(.production))
        guard case .backoff = machine.receivedResponse(httpStatus: 200, body: F.failure(0)) else {
            Issue.record("Expected a backoff after a success without a receipt")
            return
        }
    }

    @Test("When the attempts run out the machine fails as store_unavailable with a Retry-After")
    func attemptsExhausted() {
        var machine = Machine(jitter: .seeded(11))
        var action = machine.start()
        var backoffs = 0
        var posts = 1
        while case .post = action {
            action = machine.receivedResponse(httpStatus: 503, body: nil)
            if case .backoff = action {
                backoffs += 1
                action = machine.backoffElapsed()
                posts += 1
            }
        }
        #expect(posts == 4)
        #expect(backoffs == 3)
        // The next retry would have been the fourth: ceiling 2 s.
        #expect(action == .fail(.storeUnavailable(retryAfter: .seconds(2), status: nil)))
    }

    @Test("The last status is reported when retryable statuses exhaust the attempts")
    func attemptsExhaustedByStatus() {
        var machine = Machine(configuration: .init(maxAttempts: 2), jitter: .seeded(11))
        _ = machine.start()
        guard case .backoff = machine.receivedResponse(httpStatus: 200, body: F.failure(21009, isRetryable: true))
        else {
            Issue.record("Expected a backoff")
            return
        }
        _ = machine.backoffElapsed()
        #expect(
            machine.receivedResponse(httpStatus: 200, body: F.failure(21005, isRetryable: true))
                == .fail(.storeUnavailable(retryAfter: .seconds(1), status: 21005))
        )
    }

    @Test("Transient failures count across a redirect; redirects use no attempts")
    func attemptsAcrossRedirect() {
        var machine = Machine(configuration: .init(maxAttempts: 2), jitter: .seeded(5))
        _ = machine.start()
        guard case .backoff(_, then: .production) = machine.transportFailed(isTimeout: true) else {
            Issue.record("Expected a backoff")
            return
        }
        #expect(machine.backoffElapsed() == .post(.production))
        #expect(machine.receivedResponse(httpStatus: 200, body: F.failure(21007)) == .post(.sandbox))
        #expect(
            machine.receivedResponse(httpStatus: 502, body: nil)
                == .fail(.storeUnavailable(retryAfter: .seconds(1), status: nil)))
    }

    @Test("With one attempt nothing is retried")
    func singleAttempt() {
        var machine = Machine(configuration: .init(maxAttempts: 1))
        _ = machine.start()
        #expect(
            machine.transportFailed(isTimeout: false) == .fail(.storeUnavailable(retryAfter: .seconds(1), status: nil)))
    }

    @Test("Backoff delays stay within equal-jitter bounds under monotone, capped ceilings", arguments: 0..<32)
    func backoffBounds(seed: UInt64) {
        let backoff = ExponentialBackoff()
        var machine = Machine(configuration: .init(maxAttempts: 9, backoff: backoff), jitter: .seeded(seed))
        _ = machine.start()
        var previousCeiling = Duration.zero
        for retry in 1...8 {
            guard case .backoff(let delay, then: .production) = machine.transportFailed(isTimeout: true) else {
                Issue.record("Expected a backoff for retry \(retry)")
                return
            }
            let ceiling = backoff.ceiling(forRetry: retry)
            #expect(ceiling >= previousCeiling)
            #expect(ceiling <= .seconds(4))
            #expect(
                delay >= ceiling / 2 && delay <= ceiling, "retry \(retry): \(delay) outside \(ceiling / 2)...\(ceiling)"
            )
            previousCeiling = ceiling
            #expect(machine.backoffElapsed() == .post(.production))
        }
        #expect(
            machine.transportFailed(isTimeout: true) == .fail(.storeUnavailable(retryAfter: .seconds(4), status: nil)))
    }

    @Test("The same seed gives the same delays; another seed other delays")
    func deterministicJitter() {
        func delays(seed: UInt64) -> [Duration] {
            var machine = Machine(configuration: .init(maxAttempts: 6), jitter: .seeded(seed))
            _ = machine.start()
            var result: [Duration] = []
            for _ in 1...5 {
                if case .backoff(let delay, _) = machine.transportFailed(isTimeout: false) { result.append(delay) }
                _ = machine.backoffElapsed()
            }
            return result
        }
        #expect(delays(seed: 42) == delays(seed: 42))
        #expect(delays(seed: 42) != delays(seed: 43))
        #expect(delays(seed: 42).count == 5)
    }

    @Test("With Production alone, 21007 fails as environment without asking sandbox, and 21002 is not retried there")
    func productionOnly() {
        let configuration = Machine.Configuration(environments: [.production])
        var machine = Machine(configuration: configuration)
        _ = machine.start()
        #expect(
            machine.receivedResponse(httpStatus: 200, body: F.failure(21007))
                == .fail(.environmentNotAccepted(.sandbox)))
        var malformed = Machine(configuration: configuration)
        _ = malformed.start()
        #expect(
            malformed.receivedResponse(httpStatus: 200, body: F.failure(21002))
                == .fail(.receiptMalformed(status: 21002)))
        var valid = Machine(configuration: configuration)
        _ = valid.start()
        let answer = F.success()
        #expect(valid.receivedResponse(httpStatus: 200, body: answer) == .succeed(answer, .production))
    }

    @Test("With Sandbox alone, a production receipt fails as environment and a sandbox one succeeds")
    func sandboxOnly() {
        let configuration = Machine.Configuration(environments: [.sandbox])
        var machine = Machine(configuration: configuration)
        #expect(machine.start() == .post(.production))
        #expect(
            machine.receivedResponse(httpStatus: 200, body: F.success())
                == .fail(.environmentNotAccepted(.production)))
        var sandbox = Machine(configuration: configuration)
        _ = sandbox.start()
        #expect(sandbox.receivedResponse(httpStatus: 200, body: F.failure(21007)) == .post(.sandbox))
        let answer = F.success(environment: .sandbox)
        #expect(sandbox.receivedResponse(httpStatus: 200, body: answer) == .succeed(answer, .sandbox))
    }

    @Test("A refused environment is a 403 receipt_invalid with the reason environment")
    func environmentRefusal() {
        let error = ReceiptVerificationError.environmentNotAccepted(.sandbox)
        #expect(error.errorCode.rawValue == "receipt_invalid")
        #expect(error.status.code == 403)
        #expect(error.errorReason == "environment")
        #expect(error.message.contains("Sandbox"))
        #expect(ReceiptVerificationError.receiptInvalid(status: 21003).errorReason == nil)
    }

    @Test("A redirect from the store is a misconfiguration, not followed")
    func redirectIsMisconfigured() {
        for status in [301, 302, 307, 308] {
            var machine = Machine()
            _ = machine.start()
            #expect(
                machine.receivedResponse(httpStatus: status, body: nil)
                    == .fail(.storeMisconfigured(status: nil, httpStatus: status)))
        }
    }
}

extension ReceiptVerificationStateMachineTests.Expectation {
    var isTerminal: Bool {
        switch self {
        case .succeed, .fail: true
        case .post, .backoff: false
        }
    }
}

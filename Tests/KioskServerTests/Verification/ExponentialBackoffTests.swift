import KioskCore
import KioskServer
import Testing

@Suite("Exponential backoff and jitter")
struct ExponentialBackoffTests {
    @Test("Ceilings double from 250 ms and stop at 4 s")
    func ceilings() {
        let backoff = ExponentialBackoff()
        #expect(
            (1...7).map(backoff.ceiling(forRetry:)) == [
                .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(4), .seconds(4),
            ])
        #expect(backoff.ceiling(forRetry: 10_000) == .seconds(4))
    }

    @Test("Equal jitter: half fixed, half random")
    func equalJitter() {
        let backoff = ExponentialBackoff()
        #expect(backoff.delay(forRetry: 3, unit: 0) == .milliseconds(500))
        #expect(backoff.delay(forRetry: 3, unit: 0.5) == .milliseconds(750))
        #expect(backoff.delay(forRetry: 3, unit: 1) == .seconds(1))
        #expect(backoff.delay(forRetry: 9, unit: 0) == .seconds(2))
    }

    @Test("Retry-After is the ceiling in whole seconds, at least one")
    func retryAfter() {
        let backoff = ExponentialBackoff()
        #expect(
            (1...6).map(backoff.retryAfter(forRetry:)) == [
                .seconds(1), .seconds(1), .seconds(1), .seconds(2), .seconds(4), .seconds(4),
            ])
        let odd = ExponentialBackoff(initialDelay: .milliseconds(1500), multiplier: 3, maximumDelay: .seconds(10))
        #expect(odd.retryAfter(forRetry: 1) == .seconds(2))
        #expect(odd.retryAfter(forRetry: 2) == .seconds(5))
        #expect(odd.retryAfter(forRetry: 3) == .seconds(10))
    }

    @Test("Seeded jitter units are reproducible, in 0..<1, and forks are independent")
    func jitterSource() {
        var first = JitterSource.seeded(99)
        var second = JitterSource.seeded(99)
        let units = (0..<1000).map { _ in first.nextUnit() }
        #expect(units == (0..<1000).map { _ in second.nextUnit() })
        #expect(units.allSatisfy { $0 >= 0 && $0 < 1 })
        #expect(Set(units).count > 990)

        var parent = JitterSource.seeded(5)
        var childA = parent.fork()
        var childB = parent.fork()
        #expect(childA.next() != childB.next())

        var system = JitterSource.system
        #expect(system.fork() == .system)
    }
}

import KioskCore

/// The random numbers behind retry jitter: the system's generator in production, a seeded one in tests.
///
/// A value type, so a state machine can own one without sharing mutable state; ``fork()`` derives independent
/// generators for concurrent verifications while keeping a seeded sequence reproducible.
public struct JitterSource: RandomNumberGenerator, Sendable, Hashable {
    private enum Generator: Sendable, Hashable {
        case system
        case seeded(SplitMix64)
    }

    private var generator: Generator

    /// Uses `SystemRandomNumberGenerator`.
    public static var system: JitterSource { JitterSource(generator: .system) }

    /// A deterministic generator (``SplitMix64``) started from `seed`.
    public static func seeded(_ seed: UInt64) -> JitterSource {
        JitterSource(generator: .seeded(SplitMix64(seed: seed)))
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        switch generator {
        case .system:
            var system = SystemRandomNumberGenerator()
            return system.next()
        case .seeded(var seeded):
            defer { generator = .seeded(seeded) }
            return seeded.next()
        }
    }

    /// An independent generator: the system generator again, or a seeded one seeded from this sequence.
    public mutating func fork() -> JitterSource {
        switch generator {
        case .system: .system
        case .seeded: .seeded(next())
        }
    }
}

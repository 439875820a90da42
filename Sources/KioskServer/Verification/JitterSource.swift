/// The random numbers behind retry jitter: the system's generator in production, a seeded one in tests.
///
/// A value type, so a state machine can own one without sharing mutable state; ``fork()`` derives independent
/// generators for concurrent verifications while keeping a seeded sequence reproducible.
public struct JitterSource: RandomNumberGenerator, Sendable, Hashable {
    private enum Generator: Sendable, Hashable {
        case system
        case seeded(state: UInt64)
    }

    private var generator: Generator

    /// Uses `SystemRandomNumberGenerator`.
    public static var system: JitterSource { JitterSource(generator: .system) }

    /// A deterministic generator (SplitMix64) started from `seed`.
    public static func seeded(_ seed: UInt64) -> JitterSource { JitterSource(generator: .seeded(state: seed)) }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        switch generator {
        case .system:
            var system = SystemRandomNumberGenerator()
            return system.next()
        case .seeded(let state):
            let advanced = state &+ 0x9E37_79B9_7F4A_7C15
            generator = .seeded(state: advanced)
            var mixed = advanced
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return mixed ^ (mixed >> 31)
        }
    }

    /// A uniformly distributed value in `0 ..< 1`.
    public mutating func nextUnit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// An independent generator: the system generator again, or a seeded one seeded from this sequence.
    public mutating func fork() -> JitterSource {
        switch generator {
        case .system: .system
        case .seeded: .seeded(next())
        }
    }
}

/// A small, fast, seedable random number generator (SplitMix64): the same seed gives the same sequence on every
/// platform, for reproducible jitter, fault injection and tests. Not for cryptography.
public struct SplitMix64: RandomNumberGenerator, Sendable, Hashable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// The next `count` random bytes, eight from each 64 bits, lowest byte first (reproducible test content).
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            var word = next()
            for _ in 0..<8 where index < count {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return bytes
    }
}

extension RandomNumberGenerator {
    /// A uniformly distributed value in `0 ..< 1` (53 random bits).
    public mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1p-53 }
}

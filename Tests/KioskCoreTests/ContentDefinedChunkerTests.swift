import Foundation
import KioskCore
import Testing

@Suite("Content-defined chunker")
struct ContentDefinedChunkerTests {
    /// Small parameters, so that a few hundred KiB make hundreds of chunks.
    static let small = ChunkingParameters(minimum: 64, average: 256, maximum: 1024)

    static func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            var word = generator.next()
            for _ in 0..<8 where index < count {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return bytes
    }

    static func lengths(_ bytes: [UInt8], _ parameters: ChunkingParameters = small) -> [Int] {
        bytes.withUnsafeBytes { ContentDefinedChunker.chunkLengths(of: $0, parameters: parameters)! }
    }

    /// Chunk start offsets.
    static func boundaries(_ lengths: [Int]) -> [Int] {
        var offset = 0
        return lengths.map { length in
            defer { offset += length }
            return offset
        }
    }

    @Test func theSameBytesGiveTheSameChunksHoweverTheyAreFed() {
        let bytes = Self.randomBytes(400_000, seed: 1)
        let whole = Self.lengths(bytes)
        var generator = SplitMix64(seed: 2)
        for _ in 0..<5 {
            var chunker = ContentDefinedChunker(Self.small)!
            var lengths: [Int] = []
            var current = 0
            var position = 0
            while position < bytes.count {
                let size = min(bytes.count - position, Int(generator.next() % 3_000) + 1)
                bytes.withUnsafeBytes { all in
                    let buffer = UnsafeRawBufferPointer(rebasing: all[position..<(position + size)])
                    var offset = 0
                    while let cut = chunker.nextBoundary(in: UnsafeRawBufferPointer(rebasing: buffer[offset...])) {
                        lengths.append(current + cut)
                        current = 0
                        offset += cut
                    }
                    current += size - offset
                }
                position += size
            }
            if current > 0 { lengths.append(current) }
            #expect(lengths == whole)
        }
        #expect(Self.lengths(bytes) == whole)
    }

    @Test(arguments: [UInt64(3), 4, 5])
    func chunksStayWithinTheLimitsAndCoverTheFile(seed: UInt64) {
        for parameters in [Self.small, ChunkingParameters(minimum: 1_000, average: 4_096, maximum: 9_000)] {
            let bytes = Self.randomBytes(300_000, seed: seed)
            let lengths = Self.lengths(bytes, parameters)
            #expect(lengths.reduce(0, +) == bytes.count)
            #expect(lengths.dropLast().allSatisfy { (parameters.minimum...parameters.maximum).contains($0) })
            #expect((1...parameters.maximum).contains(lengths.last!))
            let mean = Double(bytes.count) / Double(lengths.count)
            #expect(mean > Double(parameters.average) / 2 && mean < Double(parameters.average) * 2, "mean \(mean)")
        }
    }

    @Test func uniformBytesAreCutAtTheLimits() {
        for byte in [UInt8(0), 0xFF, 0x41] {
            let bytes = [UInt8](repeating: byte, count: 10_000)
            let lengths = Self.lengths(bytes)
            #expect(lengths.reduce(0, +) == bytes.count)
            #expect(lengths.dropLast().allSatisfy { (Self.small.minimum...Self.small.maximum).contains($0) })
        }
        #expect(Self.lengths([]).isEmpty)
        #expect(Self.lengths([7]) == [1])
    }

    @Test(arguments: [50_000, 150_001, 299_000])
    func anInsertionMovesOnlyTheBoundariesNearIt(at position: Int) {
        let original = Self.randomBytes(400_000, seed: 6)
        let inserted = Self.randomBytes(100, seed: 7)
        var edited = original
        edited.insert(contentsOf: inserted, at: position)
        let before = Self.boundaries(Self.lengths(original))
        let after = Self.boundaries(Self.lengths(edited))
        // Before the insertion: the same boundaries.
        #expect(before.filter { $0 <= position } == after.filter { $0 <= position })
        // After it: the same boundaries, shifted by the inserted bytes, once the hash has seen 64 bytes past the
        // edit; at most the first two chunks after it differ.
        let later = Set(before.filter { $0 > position + Self.small.maximum })
        let shifted = Set(after.filter { $0 > position + Self.small.maximum + 100 }.map { $0 - 100 })
        let lost = later.subtracting(shifted)
        #expect(lost.count <= 2, "\(lost.count) of \(later.count) boundaries moved")
        #expect(later.count > 100)

        var deleted = original
        deleted.removeSubrange(position..<(position + 100))
        let afterDeletion = Self.boundaries(Self.lengths(deleted))
        let moved = Set(afterDeletion.filter { $0 > position + Self.small.maximum }.map { $0 + 100 })
        #expect(later.subtracting(moved).count <= 2)
    }

    /// The algorithm as ``ChunkingParameters`` states it, one byte at a time and without the chunker's code: the
    /// gear table from SplitMix64, the strict mask for the bytes before the average length, the loose one after it.
    static func referenceLengths(_ bytes: [UInt8], _ parameters: ChunkingParameters) -> [Int] {
        var generator = SplitMix64(seed: ContentDefinedChunker.gearSeed)
        let gear = (0..<256).map { _ in generator.next() }
        let bits = parameters.average.trailingZeroBitCount
        let strict = ~UInt64(0) << UInt64(64 - min(bits + 2, 63))
        let loose = ~UInt64(0) << UInt64(64 - max(bits - 2, 1))
        var lengths: [Int] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + parameters.maximum)
            var position = start + parameters.minimum
            var hash: UInt64 = 0
            var cut = end
            while position < end {
                hash = (hash &<< 1) &+ gear[Int(bytes[position])]
                let mask = position - start < parameters.average ? strict : loose
                position += 1
                if hash & mask == 0 {
                    cut = position
                    break
                }
            }
            lengths.append(min(cut, bytes.count) - start)
            start += lengths.last!
        }
        return lengths
    }

    /// The chunker, fed in pieces of random sizes, cuts where the one-byte-at-a-time definition does: with the
    /// standard parameters over 12 MiB, and with small ones over many boundaries.
    @Test(arguments: [UInt64(9), 10])
    func theChunkerCutsWhereTheDefinitionDoes(seed: UInt64) {
        let cases = [
            (ChunkingParameters.standard, Self.randomBytes(12 << 20, seed: seed), 300_000),
            (Self.small, Self.randomBytes(200_000, seed: seed), 700),
        ]
        for (parameters, bytes, largestPiece) in cases {
            let expected = Self.referenceLengths(bytes, parameters)
            #expect(
                bytes.withUnsafeBytes { ContentDefinedChunker.chunkLengths(of: $0, parameters: parameters) } == expected
            )
            var generator = SplitMix64(seed: seed)
            var chunker = ContentDefinedChunker(parameters)!
            var lengths: [Int] = []
            var current = 0
            var position = 0
            bytes.withUnsafeBytes { all in
                while position < bytes.count {
                    let size = min(bytes.count - position, Int(generator.next() % UInt64(largestPiece)) + 1)
                    var rest = UnsafeRawBufferPointer(rebasing: all[position..<(position + size)])
                    while let cut = chunker.nextBoundary(in: rest) {
                        lengths.append(current + cut)
                        current = 0
                        rest = UnsafeRawBufferPointer(rebasing: rest[cut...])
                    }
                    current += rest.count
                    position += size
                }
            }
            if current > 0 { lengths.append(current) }
            #expect(lengths == expected)
            #expect(expected.count > 8)
        }
    }

    @Test func theStandardParametersAndTheGearTableAreFixed() {
        #expect(ChunkingParameters.standard.minimum == 256 << 10)
        #expect(ChunkingParameters.standard.average == 1 << 20)
        #expect(ChunkingParameters.standard.maximum == 4 << 20)
        #expect(ChunkingParameters.standard.isSupported)
        // A change to the algorithm must get a new name: these boundaries are part of it.
        #expect(Array(Self.lengths(Self.randomBytes(3_000, seed: 8)).prefix(6)) == Self.pinnedLengths)
    }

    /// The first chunk lengths of ``randomBytes(_:seed:)`` with seed 8 under ``small``, as cut when the algorithm
    /// was named `fastcdc-gear64-nc2-v1`.
    static let pinnedLengths = [324, 226, 259, 269, 460, 328]

    @Test func unsupportedParametersAreRefused() {
        let bad = [
            ChunkingParameters(algorithm: "rabin", minimum: 64, average: 256, maximum: 1024),
            ChunkingParameters(minimum: 64, average: 300, maximum: 1024),
            ChunkingParameters(minimum: 256, average: 256, maximum: 1024),
            ChunkingParameters(minimum: 64, average: 256, maximum: 256),
            ChunkingParameters(minimum: 8, average: 256, maximum: 1024),
        ]
        for parameters in bad {
            #expect(ContentDefinedChunker(parameters) == nil)
            #expect(!parameters.isSupported)
        }
    }
}

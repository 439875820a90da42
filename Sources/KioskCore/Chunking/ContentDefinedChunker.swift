/// How a file is cut into chunks by content: the parameters a chunk manifest carries, so that a client (and a later
/// delta update) can tell whether two manifests were cut the same way.
///
/// The algorithm is FastCDC's (Xia et al., 2016): a gear rolling hash over the bytes of a chunk from its
/// ``minimum`` length on, normalized chunking (a stricter test before ``average``, a looser one after it, so lengths
/// gather around the average), and a cut at ``maximum`` at the latest. A boundary depends only on the 64 bytes before
/// it, so an insertion moves the boundaries near it and leaves every later one where it was, shifted with the bytes:
/// the chunks after an edit are the same chunks.
public struct ChunkingParameters: Sendable, Hashable, Codable {
    /// The algorithm and its gear table, by name; a client must not reuse chunks cut under another name.
    public var algorithm: String
    /// No chunk but a file's last is shorter.
    public var minimum: Int
    /// The length chunks gather around; a power of two.
    public var average: Int
    /// No chunk is longer.
    public var maximum: Int

    /// The name of this implementation: FastCDC with a 64-bit gear hash, its table from ``SplitMix64`` seeded with
    /// ``ContentDefinedChunker/gearSeed``, normalization level 2, masks on the high bits.
    public static let fastCDCv1 = "fastcdc-gear64-nc2-v1"

    /// 256 KiB / 1 MiB / 4 MiB: large enough that a 1 GiB file has about a thousand chunks, small enough that one
    /// corrupted or changed chunk costs a megabyte.
    public static let standard = ChunkingParameters(
        algorithm: fastCDCv1, minimum: 256 << 10, average: 1 << 20, maximum: 4 << 20)

    /// 16 KiB / 64 KiB / 256 KiB, for cutting one chunk finer (``GrantSubchunks``): an edit inside a chunk costs
    /// about a subchunk or two instead of the chunk.
    public static let subchunks = ChunkingParameters(
        algorithm: fastCDCv1, minimum: 16 << 10, average: 64 << 10, maximum: 256 << 10)

    /// Parameters of the current algorithm. `average` must be a power of two, and
    /// `64 ≤ minimum < average < maximum`.
    public init(algorithm: String = fastCDCv1, minimum: Int, average: Int, maximum: Int) {
        self.algorithm = algorithm
        self.minimum = minimum
        self.average = average
        self.maximum = maximum
    }

    /// Whether this implementation cuts with these parameters.
    public var isSupported: Bool {
        algorithm == Self.fastCDCv1 && minimum >= 64 && minimum < average && average < maximum
            && average.nonzeroBitCount == 1 && average >= 1 << 8 && average <= 1 << 40
    }
}

/// Finds chunk boundaries in a stream of bytes, fed in buffers of any size: the same bytes give the same boundaries
/// however they are split (see ``ChunkingParameters`` for the algorithm).
///
/// ```swift
/// var chunker = ContentDefinedChunker(.standard)!
/// for buffer in buffers {  // UnsafeRawBufferPointers, in file order
///     var offset = 0
///     while let cut = chunker.nextBoundary(in: UnsafeRawBufferPointer(rebasing: buffer[offset...])) {
///         offset += cut  // a chunk ends after buffer[offset - 1]
///     }
/// }
/// // the bytes after the last boundary are the file's last chunk
/// ```
public struct ContentDefinedChunker: Sendable {
    /// The seed of the gear table: fixed for ``ChunkingParameters/fastCDCv1`` for ever.
    public static let gearSeed: UInt64 = 0x4B49_4F53_4B43_4443  // "KIOSKCDC"

    /// 256 pseudo-random 64-bit values, one per byte value.
    static let gear: [UInt64] = {
        var generator = SplitMix64(seed: gearSeed)
        return (0..<256).map { _ in generator.next() }
    }()

    public let parameters: ChunkingParameters
    /// Tested before the average length: two more bits than the average needs (boundaries rarer).
    private let strictMask: UInt64
    /// Tested from the average length on: two fewer bits (boundaries likelier).
    private let looseMask: UInt64
    /// Bytes of the current chunk seen so far.
    private var length = 0
    private var hash: UInt64 = 0

    /// A chunker at the start of a file; nil when `parameters` are not ``ChunkingParameters/isSupported``.
    public init?(_ parameters: ChunkingParameters) {
        guard parameters.isSupported else { return nil }
        self.parameters = parameters
        let bits = parameters.average.trailingZeroBitCount
        // The high bits of the gear hash depend on the most bytes (bit i on the last i + 1).
        strictMask = ~UInt64(0) << UInt64(64 - min(bits + 2, 63))
        looseMask = ~UInt64(0) << UInt64(64 - max(bits - 2, 1))
    }

    /// Reads `bytes`, the next bytes of the file, and returns how many of them complete the current chunk, or nil
    /// when the chunk goes on past them. After a boundary the chunker is at the start of the next chunk: call it
    /// again with the rest of the buffer.
    public mutating func nextBoundary(in bytes: UnsafeRawBufferPointer) -> Int? {
        let count = bytes.count
        var index = 0
        // Nothing is hashed below the minimum: no boundary can be there.
        if length < parameters.minimum {
            index = min(parameters.minimum - length, count)
            length += index
        }
        guard index < count else { return nil }
        let (average, maximum) = (parameters.average, parameters.maximum)
        let (strictMask, looseMask) = (self.strictMask, self.looseMask)
        var hash = self.hash
        let start = index
        let base = length - start  // the chunk length is base + index
        let cut: Int? = Self.gear.withUnsafeBufferPointer { gear in
            // Below the average, the strict test.
            let strictEnd = min(count, max(start, average - base))
            if Self.scan(bytes, gear, &index, to: strictEnd, &hash, mask: strictMask) { return index }
            // From the average to the maximum, the loose test; the maximum cuts anyway.
            let looseEnd = min(count, maximum - base)
            if Self.scan(bytes, gear, &index, to: looseEnd, &hash, mask: looseMask) { return index }
            return index == maximum - base ? index : nil
        }
        if cut != nil {
            self.hash = 0
            self.length = 0
        } else {
            self.hash = hash
            self.length = base + index
        }
        return cut
    }

    /// Rolls the gear hash over `bytes[index..<end]` until a hash has no bit of `mask` set: then true, with `index`
    /// just past that byte; otherwise false, with `index` at `end`. `hash` is the hash after the last byte read.
    ///
    /// Four bytes a step: the hashes after each of them are `hash << k` plus a sum of the gear values that does not
    /// depend on `hash`, so the chain from one step to the next is one shift and one add for four bytes, not for each
    /// byte. The arithmetic is the same (wrapping, modulo 2^64), so the boundaries are the same.
    @inline(__always)
    private static func scan(
        _ bytes: UnsafeRawBufferPointer, _ gear: UnsafeBufferPointer<UInt64>, _ index: inout Int, to end: Int,
        _ hash: inout UInt64, mask: UInt64
    ) -> Bool {
        var position = index
        var rolled = hash
        defer {
            index = position
            hash = rolled
        }
        while position + 4 <= end {
            let first = gear[Int(bytes[position])]
            let second = gear[Int(bytes[position + 1])]
            let third = gear[Int(bytes[position + 2])]
            let fourth = gear[Int(bytes[position + 3])]
            let two = (first &<< 1) &+ second
            let three = (two &<< 1) &+ third
            let four = (three &<< 1) &+ fourth
            let after1 = (rolled &<< 1) &+ first
            let after2 = (rolled &<< 2) &+ two
            let after3 = (rolled &<< 3) &+ three
            let after4 = (rolled &<< 4) &+ four
            // A boundary among the four (rare): the byte-at-a-time loop below finds it from here.
            if (after1 & mask == 0) || (after2 & mask == 0) || (after3 & mask == 0) || (after4 & mask == 0) { break }
            rolled = after4
            position += 4
        }
        // The last bytes before `end`, or the four holding a boundary.
        while position < end {
            rolled = (rolled &<< 1) &+ gear[Int(bytes[position])]
            position += 1
            if rolled & mask == 0 { return true }
        }
        return false
    }

    /// The lengths of the chunks of `bytes`, a whole file, in order (the last one may be shorter than the minimum;
    /// an empty file has none).
    public static func chunkLengths(of bytes: UnsafeRawBufferPointer, parameters: ChunkingParameters) -> [Int]? {
        guard var chunker = ContentDefinedChunker(parameters) else { return nil }
        var lengths: [Int] = []
        var offset = 0
        while offset < bytes.count,
            let cut = chunker.nextBoundary(in: UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        {
            lengths.append(cut)
            offset += cut
        }
        if offset < bytes.count { lengths.append(bytes.count - offset) }
        return lengths
    }
}

/// CRC-32 as gzip uses it (ISO 3309, reflected polynomial `0xEDB88320`), and the combination of two CRCs into the
/// CRC of the concatenated data, so that a cached part's CRC is reused instead of reading the part again.
enum CRC32 {
    /// The reflected polynomial.
    private static let polynomial: UInt32 = 0xEDB8_8320

    /// The CRC of each byte value.
    private static let table: [UInt32] = (0..<256).map { byte in
        var crc = UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ polynomial : crc >> 1 }
        return crc
    }

    /// The CRC of `bytes` following data whose CRC is `crc` (0 for none).
    static func checksum(_ bytes: some Sequence<UInt8>, continuing crc: UInt32 = 0) -> UInt32 {
        let done = bytes.withContiguousStorageIfAvailable { update(crc, $0) }
        return done ?? Array(bytes).withUnsafeBufferPointer { update(crc, $0) }
    }

    private static func update(_ crc: UInt32, _ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        table.withUnsafeBufferPointer { table in
            var crc = ~crc
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
            return ~crc
        }
    }

    /// The CRC of `A ‖ B` from `first` (the CRC of A), `second` (the CRC of B) and B's length, as zlib's
    /// `crc32_combine` computes it: the effect of `secondLength` zero bytes on `first` is a linear map over GF(2),
    /// applied by repeated squaring of the one-zero-bit operator (about log2(length) 32×32 matrix squarings).
    static func combine(_ first: UInt32, _ second: UInt32, secondLength: Int) -> UInt32 {
        precondition(secondLength >= 0, "a length is never negative")
        guard secondLength > 0 else { return first }
        // `odd` is the operator for one zero bit; squaring it twice gives the operator for four zero bits.
        var odd = [UInt32](repeating: 0, count: 32)
        var even = [UInt32](repeating: 0, count: 32)
        odd[0] = polynomial
        for bit in 1..<32 { odd[bit] = 1 << (bit - 1) }
        square(into: &even, odd)
        square(into: &odd, even)
        // Each pass squares the operator to the next power of two zero bytes (1, 2, 4, … bytes) and applies it when
        // that bit of the length is set.
        var crc = first
        var length = secondLength
        while length != 0 {
            square(into: &even, odd)
            if length & 1 == 1 { crc = times(even, crc) }
            length >>= 1
            guard length != 0 else { break }
            square(into: &odd, even)
            if length & 1 == 1 { crc = times(odd, crc) }
            length >>= 1
        }
        return crc ^ second
    }

    /// `matrix · vector` over GF(2): the XOR of the columns selected by the vector's set bits.
    private static func times(_ matrix: [UInt32], _ vector: UInt32) -> UInt32 {
        var sum: UInt32 = 0
        var vector = vector
        var column = 0
        while vector != 0 {
            if vector & 1 == 1 { sum ^= matrix[column] }
            vector >>= 1
            column += 1
        }
        return sum
    }

    /// `result = matrix · matrix`.
    private static func square(into result: inout [UInt32], _ matrix: [UInt32]) {
        for column in 0..<32 { result[column] = times(matrix, matrix[column]) }
    }
}

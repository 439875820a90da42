import CompressNIO
import NIOCore

/// Bytes compressed once into raw deflate blocks that can sit anywhere inside a gzip member: the blocks end with a
/// sync flush (byte-aligned, none of them final) and refer to nothing before them. With the CRC-32 and length of
/// the uncompressed bytes, a gzip answer is stitched around them per request (``GzipMember``) without compressing
/// or reading them again.
struct DeflatedPart: Sendable {
    /// The raw deflate blocks, ending with the sync flush's empty stored block.
    let deflated: ByteBuffer
    /// The CRC-32 of the uncompressed bytes.
    let crc: UInt32
    /// The number of uncompressed bytes.
    let length: Int

    /// Compresses `bytes` at zlib's default level.
    init(compressing bytes: ByteBuffer) throws {
        self.deflated = try Self.deflate(bytes, flush: .sync, configuration: ZlibConfiguration())
        self.crc = CRC32.checksum(bytes.readableBytesView)
        self.length = bytes.readableBytes
    }

    /// Raw deflate of `bytes` by a fresh compressor: `.sync` leaves the stream open and byte-aligned, `.finish` ends
    /// it with a final block.
    static func deflate(
        _ bytes: ByteBuffer, flush: CompressNIOFlush, configuration: ZlibConfiguration,
        allocator: ByteBufferAllocator = ByteBufferAllocator()
    ) throws -> ByteBuffer {
        let compressor = try ZlibCompressor(algorithm: .deflate, configuration: configuration)
        var input = bytes
        var output = allocator.buffer(capacity: compressor.maxSize(from: input))
        try compressor.deflate(from: &input, to: &output, flush: flush)
        return output
    }
}

/// One gzip member (RFC 1952) around a cached ``DeflatedPart``: header, the prefix deflated, the cached blocks, the
/// suffix deflated to the end of the stream, and the trailer, whose CRC-32 combines the three parts' CRCs.
enum GzipMember {
    /// ID1 ID2, CM = deflate, no flags, no modification time, no extra flags, OS = Unix (as zlib writes it).
    static let header: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]
    /// The per-request parts are a few hundred bytes: a 512-byte window and the smallest state compress them about
    /// as well as the defaults, with far less memory to set up.
    private static let smallParts = ZlibConfiguration(windowSize: .window2k, memoryLevel: .memory1k)

    /// The gzip member of `prefix ‖ middle ‖ suffix`, as buffers to send in order (the middle one is `middle`'s
    /// cached bytes, not a copy).
    static func stitch(prefix: ByteBuffer, middle: DeflatedPart, suffix: ByteBuffer) throws -> [ByteBuffer] {
        var head = ByteBuffer(bytes: header)
        var deflatedPrefix = try DeflatedPart.deflate(prefix, flush: .sync, configuration: smallParts)
        head.writeBuffer(&deflatedPrefix)
        var tail = try DeflatedPart.deflate(suffix, flush: .finish, configuration: smallParts)
        var crc = CRC32.combine(
            CRC32.checksum(prefix.readableBytesView), middle.crc, secondLength: middle.length)
        crc = CRC32.combine(crc, CRC32.checksum(suffix.readableBytesView), secondLength: suffix.readableBytes)
        let length = prefix.readableBytes + middle.length + suffix.readableBytes
        tail.writeInteger(crc, endianness: .little)
        tail.writeInteger(UInt32(truncatingIfNeeded: length), endianness: .little)
        return [head, middle.deflated, tail]
    }
}

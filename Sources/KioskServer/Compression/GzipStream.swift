import CompressNIO
import NIOCore

/// One gzip member (RFC 1952) written as its bytes come, for a body gzipped on the way out (the fault
/// `gzip-range`): each piece is deflated by a compressor of its own and sync-flushed (byte-aligned, no block of it
/// final, nothing in it referring to an earlier piece), as ``DeflatedPart`` is, so no compressor is kept between
/// pieces; the end is an empty final block and the trailer (the CRC-32 and length of every piece).
struct GzipStream: Sendable {
    /// An empty stored block marked final: BFINAL = 1 and BTYPE = 00 padded to the byte, then LEN 0 and NLEN
    /// 0xFFFF. The stream is byte-aligned after a sync flush, so it may follow any piece.
    private static let finalBlock: [UInt8] = [0x01, 0x00, 0x00, 0xFF, 0xFF]

    /// Whether the member's header has gone out.
    private var isStarted = false
    /// The CRC-32 of the uncompressed bytes so far.
    private var crc: UInt32 = 0
    /// How many uncompressed bytes so far.
    private var length = 0

    /// A member with no bytes yet.
    init() {}

    /// The gzip bytes of `piece`, preceded by the member's header for the first piece; nothing for an empty piece
    /// once the header is out.
    mutating func deflate(_ piece: ByteBuffer) throws -> ByteBuffer {
        var output = ByteBuffer()
        if !isStarted {
            isStarted = true
            output.writeBytes(GzipMember.header)
        }
        guard piece.readableBytes > 0 else { return output }
        var deflated = try DeflatedPart.deflate(piece, flush: .sync, configuration: ZlibConfiguration())
        output.writeBuffer(&deflated)
        crc = CRC32.checksum(piece.readableBytesView, continuing: crc)
        length += piece.readableBytes
        return output
    }

    /// The member's last bytes: its header if nothing went out yet, the final block and the trailer.
    mutating func finish() -> ByteBuffer {
        var output = ByteBuffer()
        if !isStarted {
            isStarted = true
            output.writeBytes(GzipMember.header)
        }
        output.writeBytes(Self.finalBlock)
        output.writeInteger(crc, endianness: .little)
        output.writeInteger(UInt32(truncatingIfNeeded: length), endianness: .little)
        return output
    }
}

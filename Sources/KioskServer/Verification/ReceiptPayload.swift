import Crypto
import Foundation
import KioskStore

/// A receipt's base64 text, checked and normalized before anything is sent to the store.
struct ReceiptPayload: Sendable {
    /// The base64 text with all whitespace removed (line-wrapped base64 is accepted).
    let base64: String
    /// The SHA-256 of ``base64``: the cache and coalescing key, so the receipt itself is never kept as a key.
    let digest: Data

    /// Checks `text`: at most `maximumLength` UTF-8 bytes (checked first), then non-empty, padded base64
    /// (`A–Z a–z 0–9 + /`, `=` only at the end) once whitespace is removed.
    init(validating text: String, maximumLength: Int) throws(ReceiptVerificationError) {
        guard text.utf8.count <= maximumLength else { throw .payloadTooLarge }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var padding = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), 0x0B, 0x0C:
                continue
            case UInt8(ascii: "="):
                padding += 1
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
                guard padding == 0 else { throw .receiptMalformed(status: nil) }
            default:
                throw .receiptMalformed(status: nil)
            }
            bytes.append(byte)
        }
        guard !bytes.isEmpty, bytes.count % 4 == 0, padding <= 2 else { throw .receiptMalformed(status: nil) }
        self.base64 = String(decoding: bytes, as: UTF8.self)
        self.digest = Data(SHA256.hash(data: bytes))
    }
}

import Crypto
import Foundation
import KioskCore

/// A SHA-256 digest held as its 32 bytes, inline. A catalog of 100,000 files keeps one per file and one per hash
/// cache entry, where a 64-digit hex `String` costs a heap allocation of over 100 bytes each.
public struct SHA256Digest: Sendable, Hashable {
    /// The bytes, big-endian, eight to a word.
    private let word0, word1, word2, word3: UInt64

    /// The digest of a finished hash.
    public init(_ digest: SHA256.Digest) {
        // A SHA-256 digest is always 32 bytes.
        self.init(bytes: Array(digest))!
    }

    /// The digest with these 32 bytes; nil for any other count.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        var words = [UInt64](repeating: 0, count: 4)
        for (offset, byte) in bytes.enumerated() { words[offset / 8] = words[offset / 8] << 8 | UInt64(byte) }
        (word0, word1, word2, word3) = (words[0], words[1], words[2], words[3])
    }

    /// The digest written as 64 lowercase hex digits, as ``hexString`` writes it, given as UTF-8; nil for anything
    /// else (another length, uppercase, any other character).
    public init?(hexUTF8 text: some Collection<UInt8>) {
        guard text.count == 64 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(32)
        var high: UInt8?
        for character in text {
            guard let nibble = Self.nibble(character) else { return nil }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        self.init(bytes: bytes)
    }

    /// The digest written as 64 lowercase hex digits; nil for anything else.
    public init?(hex: String) {
        self.init(hexUTF8: hex.utf8)
    }

    /// The 32 bytes.
    public var bytes: [UInt8] {
        [word0, word1, word2, word3].flatMap { word in
            stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: word >> UInt64($0)) }
        }
    }

    /// The 64 lowercase hex digits.
    public var hexString: String { bytes.hexString }

    /// The 32 bytes in base64 (44 characters), as RFC 9530 digest fields write them.
    public var base64: String { Data(bytes).base64EncodedString() }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}

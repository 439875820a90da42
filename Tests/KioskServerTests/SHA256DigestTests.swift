import Crypto
import Foundation
import KioskCore
import Testing

@testable import KioskServer

struct SHA256DigestTests {
    static let abcHex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

    @Test func hexRoundTrips() throws {
        let digest = try #require(SHA256Digest(hex: Self.abcHex))
        #expect(digest.hexString == Self.abcHex)
        #expect(SHA256Digest(hexUTF8: Array(Self.abcHex.utf8)) == digest)
    }

    @Test func bytesRoundTripInOrder() throws {
        let bytes = (0..<32).map { UInt8($0 * 7 + 1) }
        let digest = try #require(SHA256Digest(bytes: bytes))
        #expect(digest.bytes == bytes)
        #expect(digest.hexString == bytes.hexString)
        #expect(SHA256Digest(hex: bytes.hexString) == digest)
    }

    @Test func matchesAFinishedHash() {
        let hash = SHA256.hash(data: Data("abc".utf8))
        let digest = SHA256Digest(hash)
        #expect(digest.hexString == Self.abcHex)
        #expect(digest.bytes == Array(hash))
        #expect(digest.base64 == Data(hash).base64EncodedString())
        #expect(digest != SHA256Digest(SHA256.hash(data: Data("abd".utf8))))
    }

    @Test(arguments: [
        "", String(abcHex.dropLast()), abcHex + "0", abcHex.uppercased(), "g" + abcHex.dropFirst(),
        " " + abcHex.dropFirst(), String(abcHex.dropLast()) + "\n", String(repeating: "é", count: 32),
    ])
    func invalidHexIsRefused(text: String) {
        #expect(SHA256Digest(hex: text) == nil)
    }

    @Test(arguments: [0, 31, 33])
    func wrongByteCountIsRefused(count: Int) {
        #expect(SHA256Digest(bytes: [UInt8](repeating: 1, count: count)) == nil)
    }
}

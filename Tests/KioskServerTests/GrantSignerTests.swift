import Crypto
import Foundation
import KioskCore
import Testing

@testable import KioskServer

enum GrantTestFixtures {
    static let expiry: Int64 = 1_800_000_000
    static let beforeExpiry = Date(timeIntervalSince1970: TimeInterval(expiry - 60))

    static let claims = GrantClaims(
        productID: "com.example.kiosk.magazine.2026-11", contentVersion: "1.0", transactionID: "2000000123456789",
        expiresAt: expiry)

    static func key(_ byte: UInt8) -> SymmetricKey { SymmetricKey(data: Data(repeating: byte, count: 32)) }

    static let keyring = GrantKeyring(current: "k1", keys: ["k1": key(1)])
    static let signer = GrantSigner(keyring: keyring)
    static let token = signer.sign(claims)

    static func secret(_ character: Character, count: Int = 32) -> String { String(repeating: character, count: count) }

    /// The base64url alphabet.
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

    /// Replaces the character at `offset` of `text`.
    static func replacing(_ text: String, at offset: Int, with character: Character) -> String {
        var characters = Array(text)
        characters[offset] = character
        return String(characters)
    }

    /// The token's four parts.
    static func parts(_ token: String) -> [String] {
        token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }
}

@Suite("Grant tokens")
struct GrantSignerTests {
    typealias F = GrantTestFixtures

    private func expectInvalid(
        _ token: String, signer: GrantSigner = GrantTestFixtures.signer, now: Date = GrantTestFixtures.beforeExpiry,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        switch signer.verify(token, now: now) {
        case .success(let claims):
            Issue.record("token \(token.prefix(120)) opened \(claims)", sourceLocation: sourceLocation)
        case .failure(let error):
            #expect(error.errorCode == .tokenInvalid, "token \(token.prefix(120))", sourceLocation: sourceLocation)
        }
    }

    // MARK: Round trip and shape

    @Test func signedTokenVerifiesToTheSameClaims() throws {
        let claims = try F.signer.verify(F.token, now: F.beforeExpiry).get()
        #expect(claims == F.claims)
    }

    @Test func tokenHasFourURLSafeParts() {
        let parts = F.parts(F.token)
        #expect(parts.count == 4)
        #expect(parts[0] == "v1")
        #expect(parts[1] == "k1")
        for part in parts[2...] {
            #expect(!part.isEmpty)
            #expect(part.allSatisfy { F.alphabet.contains($0) }, "\(part) is not unpadded base64url")
        }
    }

    @Test(arguments: [
        GrantClaims(productID: "a", contentVersion: "b", transactionID: "", expiresAt: 0),
        GrantClaims(
            productID: String(repeating: "p", count: 255), contentVersion: String(repeating: "v", count: 255),
            transactionID: String(repeating: "9", count: 64), expiresAt: .max),
        GrantClaims(productID: "x.y_z-1", contentVersion: "2026-11-r2", transactionID: "t\"q\\u", expiresAt: -5),
    ])
    func roundTripsAnyClaims(claims: GrantClaims) throws {
        let token = F.signer.sign(claims)
        // A moment long before every expiry in the table.
        let decoded = try F.signer.verify(token, now: Date(timeIntervalSince1970: -1e12)).get()
        #expect(decoded == claims)
    }

    @Test func longestRealisticTokenStillVerifies() throws {
        // Product IDs and versions are at most 255 characters; such a token must not hit the size limit.
        let claims = GrantClaims(
            productID: String(repeating: "p", count: 255), contentVersion: String(repeating: "v", count: 255),
            transactionID: String(repeating: "9", count: 64), expiresAt: F.expiry)
        let token = F.signer.sign(claims)
        #expect(try F.signer.verify(token, now: F.beforeExpiry).get() == claims)
    }

    // MARK: Expiry

    @Test func exactlyAtExpiryIsExpired() {
        let result = F.signer.verify(F.token, now: Date(timeIntervalSince1970: TimeInterval(F.expiry)))
        #expect(throws: GrantTokenRefusal.self) { try result.get() }
        if case .failure(let error) = result { #expect(error.errorCode == .tokenExpired) }
    }

    @Test func oneSecondBeforeExpiryIsValid() throws {
        let claims = try F.signer.verify(F.token, now: Date(timeIntervalSince1970: TimeInterval(F.expiry - 1))).get()
        #expect(claims.expiresAt == F.expiry)
    }

    @Test func aFractionOfASecondBeforeExpiryIsValid() throws {
        _ = try F.signer.verify(F.token, now: Date(timeIntervalSince1970: TimeInterval(F.expiry) - 0.25)).get()
    }

    @Test(arguments: [1, 60, 86_400 * 365])
    func afterExpiryIsExpired(secondsLate: Int64) {
        guard
            case .failure(let error) = F.signer.verify(
                F.token, now: Date(timeIntervalSince1970: TimeInterval(F.expiry + secondsLate)))
        else {
            Issue.record("an expired token was accepted")
            return
        }
        #expect(error.errorCode == .tokenExpired)
        #expect(error.errorCode.httpStatus == 401)
    }

    @Test func tamperedExpiredTokenIsInvalidNotExpired() {
        let parts = F.parts(F.token)
        let forged = [parts[0], parts[1], parts[2], String(parts[3].reversed())].joined(separator: ".")
        expectInvalid(forged, now: Date(timeIntervalSince1970: TimeInterval(F.expiry + 10)))
    }

    // MARK: Tampering

    @Test(arguments: 0..<4)
    func flippingAnySingleCharacterOfAPartInvalidatesTheToken(part: Int) {
        let parts = F.parts(F.token)
        var accepted: [String] = []
        var tried = 0
        for offset in 0..<parts[part].count {
            let original = Array(parts[part])[offset]
            for replacement in F.alphabet where replacement != original {
                var changed = parts
                changed[part] = F.replacing(parts[part], at: offset, with: replacement)
                let token = changed.joined(separator: ".")
                tried += 1
                if case .success = F.signer.verify(token, now: F.beforeExpiry) { accepted.append(token) }
            }
        }
        #expect(tried > 0)
        if part == 3 {
            // A MAC of 32 bytes is 43 base64url characters; the last one carries 2 unused bits. Tokens that differ
            // only in those bits decode to the same MAC and are accepted. They open nothing the original did not,
            // but the token is malleable (see the report: compare the re-encoded MAC with the text).
            #expect(accepted.isEmpty, "accepted: \(accepted.map { F.parts($0)[3] })")
        } else {
            #expect(accepted.isEmpty, "accepted: \(accepted)")
        }
    }

    @Test func flippingAMACCharacterThatChangesItsBytesInvalidatesTheToken() {
        let parts = F.parts(F.token)
        let mac = parts[3]
        for offset in 0..<(mac.count - 1) {
            let original = Array(mac)[offset]
            for replacement in F.alphabet where replacement != original {
                var changed = parts
                changed[3] = F.replacing(mac, at: offset, with: replacement)
                expectInvalid(changed.joined(separator: "."))
            }
        }
    }

    @Test func changingTheClaimsAndKeepingTheMACIsInvalid() throws {
        var claims = F.claims
        claims.productID = "com.example.kiosk.magazine.2026-12"
        let payload = try JSONEncoder().encode(claims).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        let parts = F.parts(F.token)
        expectInvalid([parts[0], parts[1], payload, parts[3]].joined(separator: "."))
    }

    @Test(arguments: [1, 2, 3, 4, 10, 42, 43, 44, 60, 100])
    func truncatedTokensAreInvalid(drop: Int) throws {
        try #require(drop < F.token.count)
        expectInvalid(String(F.token.dropLast(drop)))
        expectInvalid(String(F.token.dropFirst(drop)))
    }

    @Test func tokenWithEachPartRemovedIsInvalid() {
        let parts = F.parts(F.token)
        for index in parts.indices {
            var fewer = parts
            fewer.remove(at: index)
            expectInvalid(fewer.joined(separator: "."))
        }
    }

    @Test(
        arguments: [
            { (t: String) in t + "." }, { "." + $0 }, { $0 + ".x" }, { $0.replacingOccurrences(of: ".", with: "..") },
            { $0 + "=" }, { $0 + " " }, { " " + $0 }, { $0 + "\n" },
        ] as [@Sendable (String) -> String])
    func extraCharactersAreInvalid(change: @Sendable (String) -> String) {
        let token = change(F.token)
        #expect(token != F.token)
        expectInvalid(token)
    }

    @Test func tokenSignedByAnotherKeyWithTheSameIDIsInvalid() {
        let other = GrantSigner(keyring: GrantKeyring(current: "k1", keys: ["k1": F.key(2)]))
        expectInvalid(other.sign(F.claims))
    }

    @Test func tokenNamingAnUnknownKeyIDIsInvalid() {
        let other = GrantSigner(keyring: GrantKeyring(current: "k9", keys: ["k9": F.key(1)]))
        let token = other.sign(F.claims)
        #expect(token.hasPrefix("v1.k9."))
        // Same key bytes, but the verifier has no key called k9.
        expectInvalid(token)
    }

    @Test func relabellingTheKeyIDIsInvalid() {
        // The verifier knows both IDs with the same bytes, but the MAC covers the key ID.
        let keys = ["k1": F.key(1), "k2": F.key(1)]
        let signer = GrantSigner(keyring: GrantKeyring(current: "k1", keys: keys))
        let relabelled = signer.sign(F.claims).replacingOccurrences(of: "v1.k1.", with: "v1.k2.")
        expectInvalid(relabelled, signer: signer)
    }

    @Test(arguments: ["v2", "V1", "v0", "", "v1 ", "1"])
    func otherVersionPrefixesAreInvalid(prefix: String) {
        var parts = F.parts(F.token)
        parts[0] = prefix
        expectInvalid(parts.joined(separator: "."))
    }

    @Test func aV2TokenWithAValidMACOverItsTextIsStillInvalid() {
        // Even if someone MACs "v2.k1.<payload>" with the right key, only v1 tokens are read.
        let parts = F.parts(F.token)
        let signed = "v2.k1.\(parts[2])"
        let mac = Data(HMAC<SHA256>.authenticationCode(for: Data(signed.utf8), using: F.key(1)))
            .base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        expectInvalid(signed + "." + mac)
    }

    @Test(arguments: [2049, 4096, 1_000_000])
    func hugeTokensAreInvalid(length: Int) {
        expectInvalid(String(repeating: "A", count: length))
        let parts = F.parts(F.token)
        let padded = [parts[0], parts[1], parts[2] + String(repeating: "A", count: length), parts[3]]
        expectInvalid(padded.joined(separator: "."))
    }

    @Test(arguments: ["", ".", "...", "....", "v1...", "v1.k1..", "v1.k1.e30.", "not a token", "Bearer x"])
    func garbageIsInvalid(token: String) {
        expectInvalid(token)
    }

    @Test func payloadThatIsNotClaimsJSONIsInvalidEvenWithAGoodMAC() {
        // A correctly MACed payload that does not decode as claims must not crash or open anything.
        for json in ["{}", "[]", "null", "{\"p\":1}", "not json"] {
            let payload = Data(json.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            let signed = "v1.k1.\(payload)"
            let mac = Data(HMAC<SHA256>.authenticationCode(for: Data(signed.utf8), using: F.key(1)))
                .base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            expectInvalid(signed + "." + mac)
        }
    }

    @Test func standardBase64MACWithPaddingIsInvalid() {
        let parts = F.parts(F.token)
        let signed = parts[0...2].joined(separator: ".")
        let mac = Data(HMAC<SHA256>.authenticationCode(for: Data(signed.utf8), using: F.key(1))).base64EncodedString()
        #expect(mac.hasSuffix("="))
        expectInvalid(signed + "." + mac)
    }

    @Test func standardBase64WithPlusOrSlashIsInvalid() throws {
        // Find claims whose MAC, in standard base64, holds '+' or '/', and send it that way.
        var found: String?
        for index in 0..<200 {
            var claims = F.claims
            claims.transactionID = "t\(index)"
            let parts = F.parts(F.signer.sign(claims))
            let signed = parts[0...2].joined(separator: ".")
            let mac = Data(HMAC<SHA256>.authenticationCode(for: Data(signed.utf8), using: F.key(1)))
                .base64EncodedString().replacingOccurrences(of: "=", with: "")
            if mac.contains("+") || mac.contains("/") {
                found = signed + "." + mac
                break
            }
        }
        expectInvalid(try #require(found))
        // And in the payload: '+', '/' and '=' are never part of a v1 token.
        let parts = F.parts(F.token)
        for character in ["+", "/", "="] {
            expectInvalid([parts[0], parts[1], parts[2] + character, parts[3]].joined(separator: "."))
            expectInvalid([parts[0], parts[1], character + parts[2], parts[3]].joined(separator: "."))
        }
    }

    // MARK: Scope

    @Test func scopeMatchesOnlyTheSameProductAndVersion() {
        let claims = F.claims
        #expect(claims.opens(productID: claims.productID, version: "1.0"))
    }

    @Test(arguments: [
        ("com.example.kiosk.magazine.2026-12", "1.0"),  // another product
        ("com.example.kiosk.magazine.2026-11", "1.1"),  // another version
        ("com.example.kiosk.magazine.2026-11", "1.0 "),
        ("com.example.kiosk.magazine.2026-1", "1.0"),  // a prefix of the product
        ("COM.EXAMPLE.KIOSK.MAGAZINE.2026-11", "1.0"),  // another case
        ("com.example.kiosk.magazine.2026-11", "1"),
        ("", ""),
    ])
    func scopeRefusesAnythingElse(productID: String, version: String) throws {
        #expect(!F.claims.opens(productID: productID, version: version))
        // What ContentAccess refuses such a request with.
        let error = GrantTokenRefusal.outOfScope
        #expect(error.errorCode == .tokenScope)
        #expect(error.errorCode.httpStatus == 403)
    }

    // MARK: Rotation

    @Test func tokensFromAPreviousKeyVerifyWhileItIsKept() throws {
        let old = GrantSigner(keyring: GrantKeyring(current: "old", keys: ["old": F.key(1)]))
        let token = old.sign(F.claims)
        let rotated = GrantSigner(keyring: GrantKeyring(current: "new", keys: ["new": F.key(2), "old": F.key(1)]))
        #expect(try rotated.verify(token, now: F.beforeExpiry).get() == F.claims)

        let fresh = rotated.sign(F.claims)
        #expect(fresh.hasPrefix("v1.new."))
        #expect(try rotated.verify(fresh, now: F.beforeExpiry).get() == F.claims)
        // The old server cannot read tokens of the new key.
        expectInvalid(fresh, signer: old)

        let retired = GrantSigner(keyring: GrantKeyring(current: "new", keys: ["new": F.key(2)]))
        expectInvalid(token, signer: retired)
        #expect(try retired.verify(fresh, now: F.beforeExpiry).get() == F.claims)
    }

    @Test func rotationThroughSecretsFromTheEnvironment() throws {
        let oldSecret = F.secret("a")
        let newSecret = F.secret("b")
        let old = GrantSigner(keyring: try GrantKeyring.fromSecret(oldSecret, keyID: "2026a"))
        let token = old.sign(F.claims)

        let rotatedRing = try GrantKeyring.fromSecret(newSecret, keyID: "2026b", previous: "2026a:\(oldSecret)")
        #expect(rotatedRing.currentKeyID == "2026b")
        let rotated = GrantSigner(keyring: rotatedRing)
        #expect(try rotated.verify(token, now: F.beforeExpiry).get() == F.claims)
        #expect(rotated.sign(F.claims).hasPrefix("v1.2026b."))

        let retired = GrantSigner(keyring: try GrantKeyring.fromSecret(newSecret, keyID: "2026b"))
        expectInvalid(token, signer: retired)
    }

    // MARK: Keyring from secrets

    @Test(arguments: [0, 1, 16, 31])
    func shortSecretsAreRefused(length: Int) {
        let error = #expect(throws: GrantKeyError.self) {
            try GrantKeyring.fromSecret(F.secret("s", count: length), keyID: "k")
        }
        guard case .secretTooShort? = error else {
            Issue.record("expected secretTooShort, got \(String(describing: error))")
            return
        }
        #expect(error?.description.contains("32") == true)
    }

    @Test func secretLengthCountsBytesNotCharacters() throws {
        // 16 two-byte characters are 32 bytes.
        _ = try GrantKeyring.fromSecret(String(repeating: "é", count: 16), keyID: "k")
        #expect(throws: GrantKeyError.self) {
            try GrantKeyring.fromSecret(String(repeating: "é", count: 15), keyID: "k")
        }
    }

    @Test(arguments: [
        "k0", "k0:", ":" + String(repeating: "x", count: 32), "k0:short", "k0=" + String(repeating: "x", count: 32),
        "k0:" + String(repeating: "x", count: 32) + ",broken",
        "k0:" + String(repeating: "x", count: 31),
    ])
    func malformedPreviousKeysAreRefused(previous: String) {
        let error = #expect(throws: GrantKeyError.self) {
            try GrantKeyring.fromSecret(F.secret("s"), keyID: "k", previous: previous)
        }
        guard case .malformedPreviousKeys? = error else {
            Issue.record("expected malformedPreviousKeys, got \(String(describing: error))")
            return
        }
    }

    @Test func wellFormedPreviousKeysAreAccepted() throws {
        let secret = F.secret("p")
        let ring = try GrantKeyring.fromSecret(
            F.secret("s"), keyID: "k", previous: "a:\(secret),b:\(secret):with:colons")
        #expect(ring.key(for: "a") != nil)
        #expect(ring.key(for: "b") != nil)
        #expect(ring.key(for: "c") == nil)
        #expect(try GrantKeyring.fromSecret(F.secret("s"), keyID: "k", previous: "").currentKeyID == "k")
        #expect(try GrantKeyring.fromSecret(F.secret("s"), keyID: "k", previous: nil).currentKeyID == "k")
    }

    @Test func aPreviousKeyReusingTheCurrentIDMustNotReplaceTheCurrentSecret() throws {
        let current = F.secret("c")
        let expected = GrantSigner(keyring: try GrantKeyring.fromSecret(current, keyID: "k"))
        let ring: GrantKeyring
        do {
            ring = try GrantKeyring.fromSecret(current, keyID: "k", previous: "k:\(F.secret("o"))")
        } catch is GrantKeyError {
            return  // refusing the configuration is a fine answer
        }
        // Otherwise new tokens must still be signed with KIOSK_GRANT_SECRET.
        let token = GrantSigner(keyring: ring).sign(F.claims)
        #expect((try? expected.verify(token, now: F.beforeExpiry).get()) == F.claims)
    }

    // MARK: Keyring file

    @Test func loadOrCreateCreatesAnOwnerOnlyFileOnceAndReloadsTheSameKey() throws {
        let directory = try ServerTestDirectory("grant-keys")
        let file = directory.url("grant-keys.json")
        #expect(!FileManager.default.fileExists(atPath: file.path))

        let first = try GrantKeyring.loadOrCreate(in: directory.url)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        let permissions = try #require(attributes[.posixPermissions] as? NSNumber).intValue
        #expect(permissions & 0o777 == 0o600)
        let written = try Data(contentsOf: file)

        let second = try GrantKeyring.loadOrCreate(in: directory.url)
        #expect(second.currentKeyID == first.currentKeyID)
        #expect(try Data(contentsOf: file) == written, "the file must not be rewritten")

        let token = GrantSigner(keyring: first).sign(F.claims)
        #expect(try GrantSigner(keyring: second).verify(token, now: F.beforeExpiry).get() == F.claims)
    }

    @Test func twoDataDirectoriesGetDifferentKeys() throws {
        let one = try ServerTestDirectory("grant-keys")
        let two = try ServerTestDirectory("grant-keys")
        let token = GrantSigner(keyring: try GrantKeyring.loadOrCreate(in: one.url)).sign(F.claims)
        expectInvalid(token, signer: GrantSigner(keyring: try GrantKeyring.loadOrCreate(in: two.url)))
    }

    @Test(arguments: [
        #"{"current":"k1","keys":[{"id":"k1","secret":"c2hvcnQ="}]}"#,  // 5-byte key
        #"{"current":"k1","keys":[{"id":"k1","secret":"not base64!"}]}"#,
        #"{"current":"k2","keys":[{"id":"k1","secret":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}]}"#,  // no current
        #"{"current":"k1","keys":[]}"#,
    ])
    func damagedKeyFileThrowsCorruptKeyFile(contents: String) throws {
        let directory = try ServerTestDirectory("grant-keys")
        try directory.write("grant-keys.json", contents)
        let error = #expect(throws: GrantKeyError.self) { try GrantKeyring.loadOrCreate(in: directory.url) }
        guard case .corruptKeyFile(let path)? = error else {
            Issue.record("expected corruptKeyFile, got \(String(describing: error))")
            return
        }
        #expect(path.hasSuffix("grant-keys.json"))
        #expect(error?.description.contains("damaged") == true)
        // The damaged file is left for the operator, not silently replaced.
        #expect(try Data(contentsOf: directory.url("grant-keys.json")) == Data(contents.utf8))
    }

    @Test(arguments: ["", "not json", "{", #"{"current":"k1"}"#, "[]"])
    func unparsableKeyFileThrowsAClearError(contents: String) throws {
        let directory = try ServerTestDirectory("grant-keys")
        try directory.write("grant-keys.json", contents)
        var thrown: (any Error)?
        do { _ = try GrantKeyring.loadOrCreate(in: directory.url) } catch { thrown = error }
        let error = try #require(thrown, "a damaged key file must not be accepted or replaced")
        #expect(try Data(contentsOf: directory.url("grant-keys.json")) == Data(contents.utf8))
        guard case .corruptKeyFile? = error as? GrantKeyError else {
            Issue.record("got \(error)")
            return
        }
    }

    @Test func unwritableDataDirectoryThrowsAClearError() throws {
        let directory = try ServerTestDirectory("grant-keys")
        let missing = directory.url("does/not/exist")
        let error = #expect(throws: SecretFile.Failure.self) { try GrantKeyring.loadOrCreate(in: missing) }
        #expect(error?.description.contains("grant-keys.json") == true)
    }
}

@Suite("Verified token cache")
struct VerifiedTokenCacheTests {
    typealias F = GrantTestFixtures

    @Test func aVerifiedTokenIsRememberedAndGivesTheSameClaims() throws {
        let cache = VerifiedTokenCache(signer: F.signer)
        #expect(try cache.verify(F.token, now: F.beforeExpiry).get() == F.claims)
        #expect(cache.count == 1)
        #expect(try cache.verify(F.token, now: F.beforeExpiry).get() == F.claims)
        #expect(cache.count == 1)
    }

    @Test func aRememberedTokenStillExpires() throws {
        let cache = VerifiedTokenCache(signer: F.signer)
        _ = try cache.verify(F.token, now: F.beforeExpiry).get()
        let afterExpiry = Date(timeIntervalSince1970: TimeInterval(F.expiry))
        guard case .failure(let error) = cache.verify(F.token, now: afterExpiry) else {
            Issue.record("an expired token was accepted from memory")
            return
        }
        #expect(error.errorCode == .tokenExpired)
    }

    @Test func refusalsAreNotRemembered() {
        let cache = VerifiedTokenCache(signer: F.signer)
        let position = F.token.count - 2  // inside the MAC
        let original = Array(F.token)[position]
        let forged = F.replacing(F.token, at: position, with: original == "A" ? "B" : "A")
        for _ in 0..<2 {
            guard case .failure(let error) = cache.verify(forged, now: F.beforeExpiry) else {
                Issue.record("a forged token was accepted")
                return
            }
            #expect(error.errorCode == .tokenInvalid)
        }
        #expect(cache.count == 0)
    }

    @Test func aFullCacheStartsOver() throws {
        let cache = VerifiedTokenCache(signer: F.signer, capacity: 3)
        for index in 0..<4 {
            var claims = F.claims
            claims.transactionID = "\(index)"
            _ = try cache.verify(F.signer.sign(claims), now: F.beforeExpiry).get()
        }
        #expect(cache.count == 1)
    }
}

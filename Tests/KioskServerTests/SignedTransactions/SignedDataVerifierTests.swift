import Crypto
import Foundation
import KioskCore
import KioskStore
import Testing
import X509

@testable import KioskServer

@Suite("Signed transactions (JWS, x5c)")
struct SignedDataVerifierTests {
    typealias Chain = TestSigningChain

    func refusal(
        _ jws: String, verifier: SignedDataVerifier
    ) async -> SignedDataRefusal? {
        do {
            _ = try await verifier.verifyTransaction(jws)
            return nil
        } catch {
            return error
        }
    }

    @Test("A transaction signed by a chain to a trusted root verifies")
    func validTransaction() async throws {
        let chain = try Chain()
        let jws = try chain.sign(Chain.transaction(productID: "com.example.kiosk.book"))
        let transaction = try await chain.verifier().verifyTransaction(jws)
        #expect(transaction.productId == "com.example.kiosk.book")
        #expect(transaction.transactionId == "2000000000000001")
        #expect(transaction.signedDate == Chain.now)
        #expect(transaction.storeTransaction.originalTransactionID == "2000000000000001")
    }

    @Test("A chain to another root is refused as untrusted_root")
    func wrongRoot() async throws {
        let trusted = try Chain()
        let other = try Chain()
        let failure = await refusal(try other.sign(Chain.transaction()), verifier: trusted.verifier())
        #expect(failure?.reason == "untrusted_root")
    }

    @Test("The default root is Apple Root CA - G3, and a self-made chain does not verify against it")
    func appleRoot() async throws {
        let apple = try AppleRootCertificates.appleRootCAG3()
        #expect(apple.subject.description.contains("CN=Apple Root CA - G3"))
        let digest = SHA256.hash(data: try apple.serializeAsDER())
        #expect(
            digest.map { String(format: "%02X", $0) }.joined()
                == "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179")
        let verifier = SignedDataVerifier(trustedRoots: [apple], bundleID: Chain.bundleID, environments: ["Sandbox"])
        let failure = await refusal(try Chain().sign(Chain.transaction()), verifier: verifier)
        #expect(failure?.reason == "untrusted_root")
    }

    @Test(
        "A missing or wrong Apple OID is refused as missing_oid",
        arguments: ["intermediate-missing", "leaf-missing", "leaf-wrong", "swapped"])
    func oids(flaw: String) async throws {
        var flaws = Chain.Flaws()
        switch flaw {
        case "intermediate-missing": flaws.intermediateOID = nil
        case "leaf-missing": flaws.leafOID = nil
        case "leaf-wrong": flaws.leafOID = [1, 2, 840, 113635, 100, 6, 11, 2]
        default:
            (flaws.intermediateOID, flaws.leafOID) = (SignedDataVerifier.leafOID, SignedDataVerifier.intermediateOID)
        }
        let chain = try Chain(flaws: flaws)
        let failure = await refusal(try chain.sign(Chain.transaction()), verifier: chain.verifier())
        #expect(failure?.reason == "missing_oid")
        #expect(failure.map(\.errorCode) == .transactionInvalid)
    }

    @Test("A leaf expired at the signed date is refused as certificate_expired")
    func expiredLeaf() async throws {
        let chain = try Chain(flaws: .init(leafNotAfter: Chain.now.addingTimeInterval(-86_400)))
        let failure = await refusal(try chain.sign(Chain.transaction()), verifier: chain.verifier())
        #expect(failure?.reason == "certificate_expired")
        #expect(failure?.message.contains("leaf") == true)
    }

    @Test("A chain not yet valid at the signed date is refused as certificate_expired")
    func notYetValid() async throws {
        let chain = try Chain(validFrom: Chain.now.addingTimeInterval(86_400))
        let failure = await refusal(try chain.sign(Chain.transaction()), verifier: chain.verifier())
        #expect(failure?.reason == "certificate_expired")
    }

    @Test("A chain of two (or one, or four) certificates is refused as chain_length", arguments: [1, 2, 4])
    func chainLength(count: Int) async throws {
        let chain = try Chain()
        let certificates = Array((chain.x5c + [chain.root]).prefix(count))
        let failure = await refusal(
            try chain.sign(Chain.transaction(), chain: certificates), verifier: chain.verifier())
        #expect(failure == .chainLength(count))
        #expect(failure?.reason == "chain_length")
    }

    @Test("alg none is refused as algorithm")
    func algNone() async throws {
        let chain = try Chain()
        let x5c = try chain.x5c.map { Data(try $0.serializeAsDER()).base64EncodedString() }
        let header = try JSONSerialization.data(withJSONObject: ["alg": "none", "x5c": x5c])
        let payload = try AppleJSON.encoder().encode(Chain.transaction())
        let jws = Base64URL.encode(header) + "." + Base64URL.encode(payload) + "."
        let failure = await refusal(jws, verifier: chain.verifier())
        #expect(failure == .unsupportedAlgorithm("none"))
        #expect(failure?.reason == "algorithm")
    }

    @Test("An HS256 token keyed with the leaf's public key is refused as algorithm")
    func hs256WithPublicKey() async throws {
        let chain = try Chain()
        let x5c = try chain.x5c.map { Data(try $0.serializeAsDER()).base64EncodedString() }
        let header = try JSONSerialization.data(withJSONObject: ["alg": "HS256", "x5c": x5c])
        let payload = try AppleJSON.encoder().encode(Chain.transaction())
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let key = SymmetricKey(data: chain.leafKey.publicKey.x963Representation)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: key)
        let failure = await refusal(input + "." + Base64URL.encode(Data(mac)), verifier: chain.verifier())
        #expect(failure == .unsupportedAlgorithm("HS256"))
    }

    @Test("A tampered payload is refused as signature")
    func tamperedPayload() async throws {
        let chain = try Chain()
        let jws = try chain.sign(Chain.transaction(productID: "com.example.kiosk.book"))
        let parts = jws.split(separator: ".").map(String.init)
        let forged = try AppleJSON.encoder().encode(Chain.transaction(productID: "com.example.kiosk.levels.pack1"))
        let tampered = [parts[0], Base64URL.encode(forged), parts[2]].joined(separator: ".")
        let failure = await refusal(tampered, verifier: chain.verifier())
        #expect(failure == .signatureInvalid)
        #expect(failure?.reason == "signature")
    }

    @Test("A signature by another key than the leaf's is refused as signature")
    func foreignSignature() async throws {
        let chain = try Chain()
        let payload = try AppleJSON.encoder().encode(Chain.transaction())
        let jws = try JWSCompact.sign(payload: payload, key: P256.Signing.PrivateKey(), chain: chain.x5c)
        #expect(await refusal(jws, verifier: chain.verifier()) == .signatureInvalid)
    }

    @Test("Another app's transaction is refused as bundle_id")
    func bundleMismatch() async throws {
        let chain = try Chain()
        let failure = await refusal(
            try chain.sign(Chain.transaction(bundleID: "com.other.app")), verifier: chain.verifier())
        #expect(failure == .bundleMismatch("com.other.app"))
        #expect(failure?.reason == "bundle_id")
    }

    @Test("A transaction from an environment the server does not accept is refused as environment")
    func environmentMismatch() async throws {
        let chain = try Chain()
        let failure = await refusal(
            try chain.sign(Chain.transaction(environment: "Production")),
            verifier: chain.verifier(environments: ["Sandbox"]))
        #expect(failure == .environmentMismatch("Production"))
        #expect(failure?.reason == "environment")
    }

    @Test("Garbage is refused as malformed", arguments: ["", "a.b", "not-base64!.x.y", "e30.e30.AAAA"])
    func malformed(text: String) async throws {
        let failure = await refusal(text, verifier: try Chain().verifier())
        #expect(failure?.reason == "malformed")
    }

    @Test("A refusal becomes a transaction_invalid envelope with its reason")
    func envelope() {
        let error = SignedDataRefusal.chainLength(2)
        #expect(error.errorCode == .transactionInvalid)
        #expect(error.errorCode.httpStatus == 403)
        #expect(error.errorReason == "chain_length")
        #expect(error.message.contains("exactly three"))
    }

    @Test(
        "The sandbox signing chain is generated once into the database, and signs transactions that verify",
        arguments: TestDatabase.engines)
    func sandboxAuthority(engine: KioskDatabase.Engine) async throws {
        try await TestDatabase.with(engine) { database in try await Self.checkSandboxAuthority(in: database) }
    }

    /// On `database`: a second load (another instance, with a data folder of its own) finds the same chain.
    static func checkSandboxAuthority(in database: KioskDatabase) async throws {
        let authority = try await SandboxSigningAuthority.load(
            from: database.sql, adoptingFileIn: try ServerTestDirectory().url)
        let again = try await SandboxSigningAuthority.load(
            from: database.sql, adoptingFileIn: try ServerTestDirectory().url)
        #expect(authority.root == again.root)
        #expect(authority.intermediate.extensions[oid: SignedDataVerifier.intermediateOID] != nil)
        #expect(authority.leaf.extensions[oid: SignedDataVerifier.leafOID] != nil)
        let verifier = SignedDataVerifier(
            trustedRoots: [again.root], bundleID: Chain.bundleID, environments: ["Sandbox"])
        let signed = try authority.sign(Chain.transaction(signed: Date()))
        #expect(try await verifier.verifyTransaction(signed).transactionId == "2000000000000001")
    }
}

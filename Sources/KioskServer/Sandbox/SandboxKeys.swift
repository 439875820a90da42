import Crypto
import Foundation
import SQLKit

/// Where the sandbox store keeps its keys: the server's database (`sandbox_keys`), so that a receipt or a signed
/// transaction one instance issued is accepted by every instance sharing the database. A key an earlier release kept
/// as a file in `--data` is adopted on the first start, so its receipts stay valid.
enum SandboxKeys {
    /// The receipt signing key (32 bytes; adopted from `sandbox-receipt.key`).
    static let receiptKey = (name: "receipt_key", legacyFile: "sandbox-receipt.key")
    /// The StoreKit 2 signing chain (JSON; adopted from `sandbox-signing-chain.json`).
    static let signingChain = (name: "signing_chain", legacyFile: "sandbox-signing-chain.json")
    /// The name of the App Store Server API key of the sandbox store's API (JSON: key ID, issuer ID, P-256 private
    /// key in PEM); no release before kept it in a file.
    static let apiKeyName = "api_key"

    /// The key `name`: the one the database holds; else the one in `legacyFile`, or a new one from `generate`, stored
    /// unless another instance stored one first (then that one is returned: instances starting at once agree).
    static func loadOrCreate(
        _ name: String, in database: any SQLDatabase, adopting legacyFile: URL?, generate: () throws -> Data
    ) async throws -> Data {
        if let stored = try await read(name, in: database) { return stored }
        let candidate = try legacyFile.flatMap { try SecretFile.read(at: $0) } ?? generate()
        try await database.insert(into: "sandbox_keys").columns("name", "value")
            .values(SQLBind(name), SQLBind(candidate.base64EncodedString()))
            .ignoringConflicts(with: ["name"])
            .run()
        guard let stored = try await read(name, in: database) else {
            throw SecretFile.Failure(description: "the sandbox store's \(name) could not be stored in the database")
        }
        return stored
    }

    private static func read(_ name: String, in database: any SQLDatabase) async throws -> Data? {
        guard
            let text = try await database.select().column("value").from("sandbox_keys")
                .where("name", .equal, name)
                .first(decodingColumn: "value", as: String.self)
        else { return nil }
        guard let data = Data(base64Encoded: text) else {
            throw SecretFile.Failure(description: "the sandbox store's \(name) in the database is not base64")
        }
        return data
    }

    /// The App Store Server API key that the sandbox store's API accepts (``SandboxAppStoreAPI``), made on first use:
    /// a sandbox-mode server signs its API requests with it unless it is given another key.
    static func loadOrCreateAPIKey(in database: any SQLDatabase, bundleID: String) async throws -> AppStoreAPIKey {
        struct Stored: Codable {
            var keyID: String
            var issuerID: String
            var privateKey: String
        }
        let data = try await loadOrCreate(apiKeyName, in: database, adopting: nil) {
            let letters = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
            let keyID = String((0..<10).map { _ in letters.randomElement()! })
            return try JSONEncoder().encode(
                Stored(
                    keyID: keyID, issuerID: UUID().uuidString.lowercased(),
                    privateKey: P256.Signing.PrivateKey().pemRepresentation))
        }
        guard let stored = try? JSONDecoder().decode(Stored.self, from: data),
            let key = try? P256.Signing.PrivateKey(pemRepresentation: stored.privateKey)
        else {
            throw SecretFile.Failure(
                description: "the sandbox store's App Store Server API key in the database is damaged; delete its row "
                    + "of sandbox_keys to generate a new one")
        }
        return AppStoreAPIKey(privateKey: key, keyID: stored.keyID, issuerID: stored.issuerID, bundleID: bundleID)
    }
}

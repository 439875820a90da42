import Crypto
import Foundation

/// The HMAC keys that sign and check grant tokens, each with an ID so keys can rotate: tokens name the key that
/// signed them, new tokens are signed with the current key, and older keys keep opening the tokens they signed
/// until those expire.
public struct GrantKeyring: Sendable {
    /// The ID of the key new tokens are signed with.
    public let currentKeyID: String
    private let keys: [String: SymmetricKey]

    /// A keyring from explicit keys. `current` must be among `keys`.
    public init(current: String, keys: [String: SymmetricKey]) {
        precondition(keys[current] != nil, "the current grant key must be in the keyring")
        self.currentKeyID = current
        self.keys = keys
    }

    /// The key with this ID, if the keyring has it.
    func key(for keyID: String) -> SymmetricKey? { keys[keyID] }

    /// The current signing key.
    var currentKey: SymmetricKey { keys[currentKeyID]! }

    /// A keyring from a secret given by the operator (`KIOSK_GRANT_SECRET`), plus earlier secrets still accepted
    /// (`KIOSK_GRANT_PREVIOUS_KEYS`, as `id:secret,id:secret`; each ID once, none equal to `keyID`).
    public static func fromSecret(_ secret: String, keyID: String, previous: String? = nil) throws -> GrantKeyring {
        guard secret.utf8.count >= 32 else { throw GrantKeyError.secretTooShort }
        var keys = [keyID: SymmetricKey(data: Data(secret.utf8))]
        for entry in (previous ?? "").split(separator: ",") {
            let parts = entry.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, !parts[0].isEmpty, parts[1].utf8.count >= 32 else {
                throw GrantKeyError.malformedPreviousKeys
            }
            guard keys[String(parts[0])] == nil else { throw GrantKeyError.duplicateKeyID(String(parts[0])) }
            keys[String(parts[0])] = SymmetricKey(data: Data(parts[1].utf8))
        }
        return GrantKeyring(current: keyID, keys: keys)
    }

    /// The keyring stored in `dataDirectory/grant-keys.json`, generating a random 256-bit key on first start (the
    /// file is created exclusively, readable by the owner only). A damaged file is an error, never replaced.
    public static func loadOrCreate(in dataDirectory: URL) throws -> GrantKeyring {
        let url = dataDirectory.appendingPathComponent("grant-keys.json")
        let data = try SecretFile.loadOrCreate(at: url) {
            let key = SymmetricKey(size: .bits256)
            let id = "k" + String(UInt32.random(in: .min ... .max), radix: 16)
            let secret = key.withUnsafeBytes { Data($0).base64EncodedString() }
            // Encoding two strings cannot fail.
            return try! JSONEncoder().encode(StoredKeys(current: id, keys: [.init(id: id, secret: secret)]))
        }
        guard let stored = try? JSONDecoder().decode(StoredKeys.self, from: data) else {
            throw GrantKeyError.corruptKeyFile(url.path)
        }
        var keys: [String: SymmetricKey] = [:]
        for key in stored.keys {
            guard let bytes = Data(base64Encoded: key.secret), bytes.count >= 32 else {
                throw GrantKeyError.corruptKeyFile(url.path)
            }
            keys[key.id] = SymmetricKey(data: bytes)
        }
        guard keys[stored.current] != nil else { throw GrantKeyError.corruptKeyFile(url.path) }
        return GrantKeyring(current: stored.current, keys: keys)
    }

    private struct StoredKeys: Codable {
        struct Key: Codable {
            var id: String
            var secret: String
        }
        var current: String
        var keys: [Key]
    }
}

/// Why a grant keyring could not be set up.
public enum GrantKeyError: Error, CustomStringConvertible {
    case secretTooShort
    case malformedPreviousKeys
    case duplicateKeyID(String)
    case corruptKeyFile(String)

    public var description: String {
        switch self {
        case .secretTooShort: "KIOSK_GRANT_SECRET must be at least 32 bytes long"
        case .malformedPreviousKeys: "KIOSK_GRANT_PREVIOUS_KEYS must read id:secret,id:secret with secrets of 32 bytes or more"
        case .corruptKeyFile(let path): "the grant key file \(path) is damaged; remove it to generate a new key"
        case .duplicateKeyID(let id): "the grant key ID '\(id)' is given twice (KIOSK_GRANT_KEY_ID, KIOSK_GRANT_PREVIOUS_KEYS)"
        }
    }
}

// The README's installation identity snippet (on Linux, the Security target of this package stands in for the
// Keychain), word for word (check-snippets.py checks that it matches the README).
import Foundation
import KioskKit
import Security

/// README, "Installations": an ID kept in the Keychain, the same after a reinstall.
enum Identity {
    static func configuration() -> KioskClient.Configuration {
        /// This installation's ID, kept in the Keychain: created once, the same after a reinstall.
        func installationID() -> String {
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.example.app.kiosk",
                kSecAttrAccount as String: "installation-id", kSecReturnData as String: true,
            ]
            var item: CFTypeRef?
            if SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess, let data = item as? Data,
                let id = String(data: data, encoding: .utf8)
            {
                return id
            }
            let id = UUID().uuidString
            let add: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.example.app.kiosk",
                kSecAttrAccount as String: "installation-id", kSecValueData as String: Data(id.utf8),
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            ]
            SecItemAdd(add as CFDictionary, nil)
            return id
        }

        var configuration = KioskClient.Configuration()
        configuration.installationIdentity = .app(installationID())
        return configuration
    }
}

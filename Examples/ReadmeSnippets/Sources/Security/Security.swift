// Linux only (the target is a dependency on Linux alone): the names of the Keychain API (Security) that the README's
// snippets use, with shapes that accept the same code, so that the snippets compile where Security does not exist.
// Nothing is kept: a look-up finds nothing, an addition succeeds.
import Foundation

/// A result code; `errSecSuccess` is 0.
public typealias OSStatus = Int32
/// Any Core Foundation object.
public typealias CFTypeRef = AnyObject
/// A Keychain query or attribute set.
public typealias CFDictionary = [String: Any]

/// No error.
public let errSecSuccess: OSStatus = 0
/// No such item.
public let errSecItemNotFound: OSStatus = -25300

/// The item's class.
public let kSecClass = "class"
/// A password that is not for the internet.
public let kSecClassGenericPassword = "genp"
/// The item's service.
public let kSecAttrService = "svce"
/// The item's account.
public let kSecAttrAccount = "acct"
/// Ask for the item's data.
public let kSecReturnData = "r_Data"
/// The item's data.
public let kSecValueData = "v_Data"
/// When the item can be read.
public let kSecAttrAccessible = "pdmn"
/// Once the device was unlocked after a restart, on this device only.
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly = "cku"

/// Looks an item up: here, none is found.
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    errSecItemNotFound
}

/// Adds an item: here, it is not kept.
@discardableResult  // as imported C functions are
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    errSecSuccess
}

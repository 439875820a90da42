import Foundation

/// An app receipt read locally, without Apple's deprecated `verifyReceipt`: the PKCS#7 `SignedData` Apple (or
/// Xcode) wraps it in, and the receipt it carries.
///
/// Reading checks structure only. Trust the contents only after KioskServer's `AppReceiptVerifier` has checked
/// the signature and the certificate chain:
///
/// ```swift
/// let document = try AppReceiptDocument.parse(base64: receiptFromTheApp)   // throws AppReceiptParseError
/// let verified = try await AppReceiptVerifier(bundleID: "com.example.app").verify(document)
/// let transactions = verified.contents.storeTransactions
/// ```
///
/// Both DER (App Store receipts) and BER (Xcode's StoreKit-testing receipts, with indefinite lengths and a
/// constructed content string) are read, within limits (nesting depth, length fields, size) that keep hostile
/// input harmless.
public struct AppReceiptDocument: Sendable, Hashable {
    /// The most base64 text accepted: 1 MiB (real receipts are a few KiB; one with years of renewals ~100 KiB).
    public static let maximumBase64Length = 1 << 20
    /// The most binary bytes accepted: what ``maximumBase64Length`` of base64 decodes to.
    public static let maximumDERLength = maximumBase64Length / 4 * 3

    /// The signature envelope, read but not verified.
    public var signedData: AppReceiptSignedData
    /// The receipt, read from ``AppReceiptSignedData/content``.
    public var contents: AppReceiptContents

    /// Reads a receipt in base64, as an app sends `Bundle.main.appStoreReceiptURL`'s file (line breaks and spaces
    /// are ignored).
    public static func parse(base64 text: String) throws(AppReceiptParseError) -> AppReceiptDocument {
        guard text.utf8.count <= maximumBase64Length else {
            throw .tooLarge(byteCount: text.utf8.count, limit: maximumBase64Length)
        }
        let compact = String(text.unicodeScalars.filter { !" \t\r\n".unicodeScalars.contains($0) })
        guard let der = Data(base64Encoded: compact) else { throw .notBase64 }
        return try parse(der: der)
    }

    /// Reads a receipt's binary form (BER or DER).
    public static func parse(der: Data) throws(AppReceiptParseError) -> AppReceiptDocument {
        guard der.count <= maximumDERLength else { throw .tooLarge(byteCount: der.count, limit: maximumDERLength) }
        let signedData = try AppReceiptSignedData(ASN1Reader.read(Array(der)))
        return AppReceiptDocument(
            signedData: signedData, contents: try AppReceiptContents(payload: Array(signedData.content)))
    }
}

import Foundation

/// Why an app receipt could not be read. Reading never traps: every malformed, truncated or hostile input ends in
/// one of these.
public enum AppReceiptParseError: Error, Sendable, Hashable {
    /// The receipt is larger than ``AppReceiptDocument/maximumBase64Length`` (base64) or
    /// ``AppReceiptDocument/maximumDERLength`` (binary); `byteCount` is the size received.
    case tooLarge(byteCount: Int, limit: Int)
    /// The text is not base64.
    case notBase64
    /// The bytes are not valid BER/DER: a truncated element, a length past the end of its container, a length
    /// field of more than four bytes, an indefinite length without end-of-contents, nesting deeper than
    /// ``ASN1Reader/maximumDepth``, bytes after the outermost element, …
    case malformedASN1(String)
    /// Valid BER/DER, but not the PKCS#7 `SignedData` or receipt structure expected at that place.
    case unexpectedStructure(String)
    /// A receipt attribute the reader needs is missing (attribute `type`, e.g. 2 for the bundle ID).
    case missingAttribute(type: Int)
    /// A receipt attribute is present but its value is not what its type requires (or it appears twice).
    case invalidAttribute(type: Int, reason: String)

    /// A sentence for people. Never contains the receipt itself.
    public var message: String {
        switch self {
        case .tooLarge(let byteCount, let limit):
            "The receipt is \(byteCount) bytes long; at most \(limit) are accepted."
        case .notBase64: "The receipt is not base64."
        case .malformedASN1(let detail): "The receipt is not valid BER/DER: \(detail)."
        case .unexpectedStructure(let detail): "The receipt is not a PKCS#7 signed app receipt: \(detail)."
        case .missingAttribute(let type): "The receipt lacks its attribute \(type)."
        case .invalidAttribute(let type, let reason): "The receipt's attribute \(type) is invalid: \(reason)."
        }
    }
}

import Foundation

/// The SHA-256 a `Repr-Digest` field (RFC 9530) gives for the whole representation, e.g.
/// `sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:`: what a client checks the complete file against,
/// whichever ranges brought its bytes.
public enum RepresentationDigest {
    /// The longest field value ``sha256(in:)`` looks at; anything longer is ignored.
    public static let maximumLength = 4096

    /// The lowercase hex SHA-256 in a `Repr-Digest` field value, or nil when it has none (other algorithms only, or
    /// a value that is not a Structured Fields dictionary of byte sequences as RFC 9530 writes them).
    public static func sha256(in value: String?) -> String? {
        guard let value, value.utf8.count <= maximumLength else { return nil }
        for member in value.split(separator: ",") {
            let parts = member.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "sha-256" else {
                continue
            }
            let item = parts[1].trimmingCharacters(in: .whitespaces)
            // Parameters after the byte sequence (`;…`) are allowed by Structured Fields and ignored.
            let bytes = item.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
            guard bytes.count >= 2, bytes.hasPrefix(":"), bytes.hasSuffix(":"),
                let data = Data(base64Encoded: String(bytes.dropFirst().dropLast())), data.count == 32
            else { return nil }
            return data.map { String(format: "%02x", $0) }.joined()
        }
        return nil
    }

    /// The field value for a lowercase hex SHA-256 (`sha-256=:<base64>:`), or nil when `hex` is not 64 hex digits.
    public static func fieldValue(sha256 hex: String) -> String? {
        guard hex.utf8.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return "sha-256=:\(Data(bytes).base64EncodedString()):"
    }
}

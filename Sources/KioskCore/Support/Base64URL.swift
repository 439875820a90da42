import Foundation

/// Base64url without padding (RFC 4648 §5), as JWS and Kiosk's grant tokens use it. Decoding is strict: standard
/// base64's `+`, `/` and `=` are refused, so one value has one spelling.
public enum Base64URL {
    /// Encodes `data` (no padding).
    public static func encode(_ data: some DataProtocol) -> String {
        let encoded = Data(data).base64EncodedString().utf8
        var out: [UInt8] = []
        out.reserveCapacity(encoded.count)
        for byte in encoded {
            switch byte {
            case UInt8(ascii: "+"): out.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): out.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): continue
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes unpadded base64url; nil for anything else.
    public static func decode(_ text: some StringProtocol) -> Data? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="): return nil
            case UInt8(ascii: "-"): out.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): out.append(UInt8(ascii: "/"))
            default: out.append(byte)
            }
        }
        while out.count % 4 != 0 { out.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(out))
    }
}

/// Syntax rules for the identifiers that appear in URLs and on disk: product IDs and content versions.
///
/// Both are used as single path components on the server and in the client's cache, so they are kept to a safe
/// alphabet: ASCII letters, digits, `.`, `_` and `-`, 1 to 255 characters, not starting with a dot.
public enum Identifiers {
    /// Whether `productID` is a well-formed product identifier (`com.example.kiosk.magazine.2026-11`).
    public static func isValidProductID(_ productID: String) -> Bool { isSafeComponent(productID) }

    /// Whether `version` is a well-formed content version (`1.0`, `2026-11-r2`).
    public static func isValidContentVersion(_ version: String) -> Bool { isSafeComponent(version) }

    /// Whether a relative file path inside a product (`Contents/levels/01.bin`) is safe: components of the safe
    /// alphabet plus spaces, `+`, `,`, `(` and `)`, no empty, `.` or `..` component, no leading slash.
    public static func isValidFilePath(_ path: String) -> Bool {
        guard !path.isEmpty, path.utf8.count <= 1024 else { return false }
        // One pass over the bytes (every content request checks its path): the length of the component so far.
        var length = 0
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/") {
                guard length > 0 else { return false }
                length = 0
                continue
            }
            guard length > 0 || byte != UInt8(ascii: "."),
                isSafeByte(byte) || byte == 0x20 || byte == 0x2B || byte == 0x2C || byte == 0x28 || byte == 0x29
            else { return false }
            length += 1
            guard length <= 255 else { return false }
        }
        return length > 0
    }

    private static func isSafeComponent(_ text: String) -> Bool {
        guard let first = text.utf8.first, first != UInt8(ascii: "."), text.utf8.count <= 255 else { return false }
        return text.utf8.allSatisfy(isSafeByte)
    }

    private static func isSafeByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }
}

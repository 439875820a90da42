import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether an address names this machine only: `localhost`, `127.0.0.0/8`, `::1`, or an IPv4-mapped `127.x`.
/// Any other name, even one that resolves to loopback today, counts as public. The server uses it for what it binds
/// and who reads `/metrics`; KioskKit for which plain `http://` servers it accepts.
public enum LoopbackAddress {
    /// Whether `host` (an address literal, brackets allowed, or `localhost`) is a loopback address.
    public static func contains(_ host: String) -> Bool {
        var literal = host.lowercased()
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        if literal == "localhost" || literal == "localhost." { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { $0[0] } == 127
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, literal, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        let isV4Mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
        return bytes == Array(repeating: 0, count: 15) + [1] || (isV4Mapped && bytes[12] == 127)
    }
}

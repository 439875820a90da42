import Foundation
import Hummingbird
import HummingbirdCore
import KioskCore

extension Request {
    /// The grant token a content, pack or subchunk request carries: `Authorization: Bearer <token>`, or `?token=` for
    /// clients that cannot set headers. Checked by ``ContentAccess/claims(for:)``.
    var bearerToken: String? {
        BearerToken.parse(authorization: headers[.authorization]) ?? BearerToken.queryToken(in: uri.string)
    }
}

/// Reads `Authorization: Bearer <token>` (the scheme in any case, the token trimmed of spaces).
enum BearerToken {
    /// The token of an `Authorization` value, or nil when it is absent or names another scheme.
    static func parse(authorization: String?) -> String? {
        guard let authorization else { return nil }
        // The scheme, compared byte by byte (every content request carries the field): `bearer` in any case after
        // any spaces, then the spaces before the token.
        var rest = authorization.utf8[...]
        while rest.first == UInt8(ascii: " ") { rest = rest.dropFirst() }
        guard rest.prefix(6).equalsIgnoringASCIICase("bearer") else { return nil }
        rest = rest.dropFirst(6)
        guard rest.first == UInt8(ascii: " ") else { return nil }
        while rest.first == UInt8(ascii: " ") { rest = rest.dropFirst() }
        guard !rest.isEmpty else { return nil }
        return trimmingWhitespace(Substring(rest))
    }

    /// The `token` query parameter of a request target, as Hummingbird's `URI.queryParameters` reads it (the first
    /// `token`, its value percent-decoded; "" when it has no `=`), or nil when there is none. A query without `%`
    /// or `#` (every token a grant URL carries) is read without building the whole parameter list.
    static func queryToken(in target: String) -> String? {
        guard let question = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        let query = target.utf8[target.utf8.index(after: question)...]
        guard !query.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "#") }) else {
            return URI(target).queryParameters.get("token")
        }
        for parameter in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = parameter.firstIndex(of: UInt8(ascii: "="))
            guard parameter[..<(equals ?? parameter.endIndex)].elementsEqual("token".utf8) else { continue }
            return equals.map { String(Substring(parameter[parameter.index(after: $0)...])) } ?? ""
        }
        return nil
    }

    /// `token` without the spaces and tabs around it (`CharacterSet.whitespaces`: tab and the Unicode space
    /// separators), without Foundation's bridging: a token is usually untouched and returned as it is.
    static func trimmingWhitespace(_ token: Substring) -> String {
        // A token that starts and ends with a visible ASCII byte (every grant token) has nothing to trim.
        let isVisibleASCII = { (byte: UInt8?) in byte.map { $0 > 0x20 && $0 < 0x7F } ?? false }
        if isVisibleASCII(token.utf8.first) && isVisibleASCII(token.utf8.last) { return String(token) }
        let scalars = token.unicodeScalars
        let isSpace = { (scalar: Unicode.Scalar) in
            scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
        }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
            let last = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(scalars[first...last])
    }
}

import Crypto
import Foundation
import HTTPTypes
import KioskCore

/// AWS Signature Version 4 for S3-compatible stores (AWS, MinIO, Garage, moto…): the presigned GET URLs with a
/// short lifetime that grants carry, so that the store sends the bytes, and the header-signed requests (PUT and HEAD
/// object, ListObjectsV2) with which `kiosk content push` uploads each product version. Pure: no I/O, and the clock
/// is an argument. It computes byte for byte what botocore computes (`scripts/oracles/sigv4-vectors.py`).
public struct SigV4Signer: Sendable {
    /// What a request's `x-amz-content-sha256` says about its body.
    public enum Payload: Sendable, Hashable {
        /// `UNSIGNED-PAYLOAD`: the body is not signed (sound over TLS; what every presigned URL says).
        case unsigned
        /// The body's SHA-256, which the store checks against the bytes it receives.
        case sha256(SHA256Digest)

        var hash: String {
            switch self {
            case .unsigned: "UNSIGNED-PAYLOAD"
            case .sha256(let digest): digest.hexString
            }
        }
    }

    /// A request ready to send: its URL and its header fields.
    public struct SignedRequest: Sendable, Hashable {
        /// The object's URL, or the bucket's for a request with no key, with the query items.
        public let url: URL
        /// The fields given, with `x-amz-date`, `x-amz-content-sha256`, `authorization` and, with a session token,
        /// `x-amz-security-token` set.
        public let headerFields: HTTPFields
    }

    /// The steps of one signature, which the tests compare with botocore's.
    struct Signature {
        let canonicalRequest: String
        let stringToSign: String
        let value: String
    }

    /// The longest lifetime SigV4 allows a presigned URL: seven days.
    public static let longestExpiry = Duration.seconds(604_800)
    static let algorithm = "AWS4-HMAC-SHA256"
    private static let dateField = HTTPField.Name("x-amz-date")!
    private static let contentSHA256Field = HTTPField.Name("x-amz-content-sha256")!
    private static let securityTokenField = HTTPField.Name("x-amz-security-token")!

    /// The store and bucket requests go to.
    public let location: S3Location
    /// The keys requests are signed with.
    public let credentials: S3Credentials

    /// A signer for requests to `location` with `credentials`.
    public init(location: S3Location, credentials: S3Credentials) {
        self.location = location
        self.credentials = credentials
    }

    /// A URL with which anyone may `method` (GET by default) the object at `key` for `expires` from `date` with no
    /// other credential. `query` items (such as `response-content-disposition`; none named `X-Amz-…`) come first.
    public func presignedURL(
        method: HTTPRequest.Method = .get, key: String, expires: Duration, at date: Date,
        query: [(name: String, value: String)] = []
    ) throws(S3SigningError) -> URL {
        try presign(method: method, key: key, expires: expires, at: date, query: query).url
    }

    /// The header fields that sign a `method` request for the object at `key` (the bucket when nil) with these query
    /// items, these fields (every one is signed) and this payload, made at `date`.
    public func signedRequest(
        method: HTTPRequest.Method, key: String?, query: [(name: String, value: String)] = [],
        headerFields: HTTPFields = [:], payload: Payload, at date: Date
    ) throws(S3SigningError) -> SignedRequest {
        try sign(method: method, key: key, query: query, headerFields: headerFields, payload: payload, at: date).request
    }

    /// ``presignedURL(method:key:expires:at:query:)`` with the steps of its signature.
    func presign(
        method: HTTPRequest.Method, key: String, expires: Duration, at date: Date,
        query: [(name: String, value: String)]
    ) throws(S3SigningError) -> (url: URL, signature: Signature) {
        let (seconds, attoseconds) = expires.components
        guard attoseconds == 0, 1...Self.longestExpiry.components.seconds ~= seconds else {
            throw .expiryOutOfRange(expires)
        }
        let target = try location.target(key: key)
        let timestamp = Self.timestamp(date)
        var items = query
        items += [
            ("X-Amz-Algorithm", Self.algorithm), ("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope(timestamp))"),
            ("X-Amz-Date", timestamp), ("X-Amz-Expires", String(seconds)), ("X-Amz-SignedHeaders", "host"),
        ]
        if let token = credentials.sessionToken { items.append(("X-Amz-Security-Token", token)) }
        let encoded = items.map { (name: $0.name.sigV4Encoded(), value: $0.value.sigV4Encoded()) }
        let signature = sign(
            method: method, path: target.path, query: encoded, headers: [("host", target.host)],
            payload: Payload.unsigned.hash, at: timestamp)
        let url = try target.url(query: Self.queryString(encoded + [("X-Amz-Signature", signature.value)]))
        return (url, signature)
    }

    /// ``signedRequest(method:key:query:headerFields:payload:at:)`` with the steps of its signature.
    func sign(
        method: HTTPRequest.Method, key: String?, query: [(name: String, value: String)], headerFields: HTTPFields,
        payload: Payload, at date: Date
    ) throws(S3SigningError) -> (request: SignedRequest, signature: Signature) {
        let target = try location.target(key: key)
        let timestamp = Self.timestamp(date)
        var fields = headerFields
        fields[.authorization] = nil
        fields[Self.dateField] = timestamp
        fields[Self.contentSHA256Field] = payload.hash
        fields[Self.securityTokenField] = credentials.sessionToken
        let headers = Self.canonicalHeaders(fields, host: target.host)
        let encoded = query.map { (name: $0.name.sigV4Encoded(), value: $0.value.sigV4Encoded()) }
        let signature = sign(
            method: method, path: target.path, query: encoded, headers: headers, payload: payload.hash, at: timestamp)
        fields[.authorization] =
            "\(Self.algorithm) Credential=\(credentials.accessKeyID)/\(scope(timestamp)), "
            + "SignedHeaders=\(headers.map(\.name).joined(separator: ";")), Signature=\(signature.value)"
        return (SignedRequest(url: try target.url(query: Self.queryString(encoded)), headerFields: fields), signature)
    }

    /// Signs the canonical request of these parts (path and query already encoded) with the key of `timestamp`'s day.
    private func sign(
        method: HTTPRequest.Method, path: String, query: [(name: String, value: String)],
        headers: [(name: String, value: String)], payload: String, at timestamp: String
    ) -> Signature {
        let canonical = Self.canonicalRequest(
            method: method.rawValue, path: path, query: query, headers: headers, payload: payload)
        let stringToSign = Self.stringToSign(canonicalRequest: canonical, timestamp: timestamp, scope: scope(timestamp))
        let key = Self.signingKey(
            secret: credentials.secretAccessKey, day: String(timestamp.prefix(8)), region: location.region)
        let value = HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key).hexString
        return Signature(canonicalRequest: canonical, stringToSign: stringToSign, value: value)
    }

    /// `20130524/us-east-1/s3/aws4_request`: the day, region and service a signature is valid for.
    func scope(_ timestamp: String) -> String {
        "\(timestamp.prefix(8))/\(location.region)/s3/aws4_request"
    }

    /// `20130524T000000Z`: the date in UTC, to the second below.
    static func timestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let whole = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: whole)
        func digits(_ value: Int?, _ width: Int) -> String {
            let number = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - number.count)) + number
        }
        return digits(parts.year, 4) + digits(parts.month, 2) + digits(parts.day, 2) + "T" + digits(parts.hour, 2)
            + digits(parts.minute, 2) + digits(parts.second, 2) + "Z"
    }

    /// The header lines of a canonical request: lower-case names in byte order, `host` among them, each value
    /// trimmed with its inner runs of spaces and tabs folded to one space, a name's values joined by commas.
    static func canonicalHeaders(_ fields: HTTPFields, host: String) -> [(name: String, value: String)] {
        var values = ["host": [host]]
        for field in fields {
            let folded = field.value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
            values[field.name.canonicalName, default: []].append(folded)
        }
        return values.map { (name: $0.key, value: $0.value.joined(separator: ",")) }
            .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// SigV4's canonical request: method, path, query items in byte order, header lines, signed names, payload.
    static func canonicalRequest(
        method: String, path: String, query: [(name: String, value: String)],
        headers: [(name: String, value: String)], payload: String
    ) -> String {
        let sorted = query.sorted {
            $0.name == $1.name
                ? $0.value.utf8.lexicographicallyPrecedes($1.value.utf8)
                : $0.name.utf8.lexicographicallyPrecedes($1.name.utf8)
        }
        let lines = headers.map { "\($0.name):\($0.value)\n" }.joined()
        let signed = headers.map(\.name).joined(separator: ";")
        return [method, path, queryString(sorted), lines, signed, payload].joined(separator: "\n")
    }

    /// What the signature signs: the algorithm, the time, the scope and the canonical request's SHA-256.
    static func stringToSign(canonicalRequest: String, timestamp: String, scope: String) -> String {
        [algorithm, timestamp, scope, SHA256.hash(data: Array(canonicalRequest.utf8)).hexString]
            .joined(separator: "\n")
    }

    /// The day's key: HMAC-SHA256 of the day, the region, `s3` and `aws4_request` in turn, from `AWS4` + secret.
    static func signingKey(secret: String, day: String, region: String) -> SymmetricKey {
        [day, region, "s3", "aws4_request"].reduce(SymmetricKey(data: Array("AWS4\(secret)".utf8))) { key, part in
            SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key))
        }
    }

    /// `name=value&…`, already encoded.
    private static func queryString(_ items: [(name: String, value: String)]) -> String {
        items.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }
}

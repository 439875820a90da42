/// A streaming plan for a `multipart/byteranges` response body (RFC 9110 §14.6, RFC 2046 §5.1.1).
///
/// The body is a sequence of ``Segment``s: literal framing bytes and ranges of the file, so the
/// server can stream the file ranges without buffering them. For each range the body holds
///
///     --boundary CRLF
///     Content-Type: <type> CRLF
///     Content-Range: bytes <first>-<last>/<length> CRLF
///     CRLF
///     <the range's bytes> CRLF
///
/// followed by the close delimiter `--boundary--` CRLF.
public struct MultipartByteRangesPlan: Sendable {
    /// One piece of the body, in order.
    public enum Segment: Sendable, Hashable {
        /// Literal bytes (part headers and delimiters).
        case bytes([UInt8])
        /// The given bytes of the file being served.
        case file(ByteRange)

        /// The number of body bytes this segment produces.
        public var length: Int64 {
            switch self {
            case let .bytes(bytes): Int64(bytes.count)
            case let .file(range): range.length
            }
        }
    }

    /// The response `Content-Type`: `multipart/byteranges; boundary=…` (quoted when the boundary is not a token).
    public let contentType: String
    /// The body, in order.
    public let segments: [Segment]
    /// The exact number of bytes the segments produce, for `Content-Length`.
    public let contentLength: Int64

    /// Plans the body for `ranges` (in the given order) of a representation of `completeLength` bytes.
    ///
    /// Returns `nil` if `ranges` is empty, a range ends at or past `completeLength`, `partContentType` is empty or
    /// contains a control character (which could inject headers), `boundary` is not 1–70 RFC 2046 `bchars` not
    /// ending in a space, or the body length would overflow `Int64`.
    public init?(ranges: [ByteRange], completeLength: Int64, partContentType: String, boundary: String) {
        guard !ranges.isEmpty, ranges.allSatisfy({ $0.last < completeLength }),
              !partContentType.isEmpty, !partContentType.utf8.contains(where: \.isControlCharacter),
              Self.isValidBoundary(boundary)
        else { return nil }

        var segments: [Segment] = []
        segments.reserveCapacity(ranges.count * 2 + 1)
        var framing = ""
        for range in ranges {
            framing += "--\(boundary)\r\n"
            framing += "Content-Type: \(partContentType)\r\n"
            framing += "Content-Range: \(ContentRange.satisfied(range, completeLength: completeLength).headerValue)\r\n"
            framing += "\r\n"
            segments.append(.bytes(Array(framing.utf8)))
            segments.append(.file(range))
            framing = "\r\n"
        }
        framing += "--\(boundary)--\r\n"
        segments.append(.bytes(Array(framing.utf8)))

        var contentLength: Int64 = 0
        for segment in segments {
            let (sum, overflow) = contentLength.addingReportingOverflow(segment.length)
            guard !overflow else { return nil }
            contentLength = sum
        }

        let isToken = boundary.utf8.allSatisfy(\.isBoundaryTokenCharacter)
        self.contentType = "multipart/byteranges; boundary=" + (isToken ? boundary : "\"\(boundary)\"")
        self.segments = segments
        self.contentLength = contentLength
    }

    /// A fresh random boundary from the system's cryptographically secure generator.
    public static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        return randomBoundary(using: &generator)
    }

    /// A random boundary: `kiosk-` followed by 32 alphanumeric characters (about 190 bits of randomness),
    /// a valid token that cannot plausibly occur in the content.
    public static func randomBoundary(using generator: inout some RandomNumberGenerator) -> String {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        var bytes = Array("kiosk-".utf8)
        for _ in 0..<32 {
            bytes.append(alphabet[Int.random(in: alphabet.indices, using: &generator)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// RFC 2046 §5.1.1: `boundary := 0*69<bchars> bcharsnospace`.
    private static func isValidBoundary(_ boundary: String) -> Bool {
        let bytes = Array(boundary.utf8)
        guard let last = bytes.last, bytes.count <= 70, last != .space else { return false }
        return bytes.allSatisfy { $0 == .space || $0.isBoundaryCharacterNoSpace }
    }
}

extension UInt8 {
    private var isASCIIAlphanumeric: Bool {
        isDigit || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self | 0x20)
    }

    /// RFC 2046 `bcharsnospace`: DIGIT / ALPHA / `'()+_,-./:=?`.
    fileprivate var isBoundaryCharacterNoSpace: Bool {
        isASCIIAlphanumeric || "'()+_,-./:=?".utf8.contains(self)
    }

    /// A boundary character that is also an RFC 9110 `tchar`, so the boundary needs no quoting.
    fileprivate var isBoundaryTokenCharacter: Bool {
        isASCIIAlphanumeric || "'+_-.".utf8.contains(self)
    }

    /// ASCII control characters other than HTAB, and DEL.
    fileprivate var isControlCharacter: Bool {
        (self < 0x20 && self != .tab) || self == 0x7F
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import KioskCore
import NIOCore
import Testing

@testable import KioskServer

@Suite("Content paths")
struct ContentPathTests {
    typealias Path = ContentPath

    static let product = "com.example.kiosk.magazine.2026-11"

    @Test(arguments: [
        (
            "/v1/content/\(product)/1.0/Contents/issue.pdf",
            Path(productID: product, version: "1.0", filePath: "Contents/issue.pdf")
        ),
        (
            "/v1/content/p/2026-11-r2/Contents/a/b/c.bin",
            Path(productID: "p", version: "2026-11-r2", filePath: "Contents/a/b/c.bin")
        ),
        (
            "/v1/content/p/1.0/Contents/My%20Issue.pdf",
            Path(productID: "p", version: "1.0", filePath: "Contents/My Issue.pdf")
        ),
        (
            "/v1/content/p/1.0/Contents/dir%20one/x%20(2).pdf",
            Path(productID: "p", version: "1.0", filePath: "Contents/dir one/x (2).pdf")
        ),
        ("/v1/content/p/1.0/Contents/a+b,c.pdf", Path(productID: "p", version: "1.0", filePath: "Contents/a+b,c.pdf")),
        (
            "/v1/content/p/1.0/Contents/a%2Bb%2Cc%28d%29.pdf",
            Path(productID: "p", version: "1.0", filePath: "Contents/a+b,c(d).pdf")
        ),
        ("/v1/content/%70/1.0/Contents/x", Path(productID: "p", version: "1.0", filePath: "Contents/x")),
        (
            "/v1/content/p/1.0/Contents/file..name",
            Path(productID: "p", version: "1.0", filePath: "Contents/file..name")
        ),
        ("/v1/content/p/1.0/x", Path(productID: "p", version: "1.0", filePath: "x")),
    ])
    func validPathsParse(raw: String, expected: Path) {
        #expect(ContentRoutes.parse(rawPath: raw) == expected)
    }

    @Test(arguments: [
        // traversal
        "/v1/content/p/1.0/Contents/../secret",
        "/v1/content/p/1.0/../../etc/passwd",
        "/v1/content/p/1.0/Contents/./x",
        "/v1/content/p/1.0/./Contents/x",
        "/v1/content/p/1.0/..",
        "/v1/content/p/../Contents/x",
        "/v1/content/../1.0/Contents/x",
        "/v1/content/p/1.0/Contents/%2e%2e/secret",
        "/v1/content/p/1.0/Contents/%2E%2E/secret",
        "/v1/content/p/1.0/Contents/%2e%2E",
        "/v1/content/p/1.0/Contents/.%2e/x",
        "/v1/content/p/1.0/Contents/%2e",
        "/v1/content/p/%2e%2e/Contents/x",
        "/v1/content/%2e%2e/1.0/Contents/x",
        "/v1/content/p/1.0/Contents/.hidden",
        // an encoded slash or NUL inside a segment
        "/v1/content/p/1.0/Contents/a%2fb",
        "/v1/content/p/1.0/Contents/a%2Fb",
        "/v1/content/p/1.0/Contents%2F..%2F..%2Fx",
        "/v1/content/p%2F1.0/Contents/x",
        "/v1/content/p/1.0/Contents/a%00.pdf",
        "/v1/content/p/1.0/Contents/a%00",
        "/v1/content/p/1.0/Contents/a%5Cb",
        // double encoding stays encoded, and '%' is not allowed in names
        "/v1/content/p/1.0/Contents/%252e%252e/x",
        // broken percent encoding
        "/v1/content/p/1.0/Contents/a%zz",
        "/v1/content/p/1.0/Contents/a%",
        "/v1/content/p/1.0/Contents/a%2",
        // empty segments
        "/v1/content/p/1.0/Contents//x",
        "/v1/content//1.0/Contents/x",
        "/v1/content/p//Contents/x",
        "/v1/content/p/1.0//",
        "/v1/content/p/1.0/Contents/",
        "/v1/content/p/1.0/Contents/x/",
        "/v1/content//p/1.0/Contents/x",
        // too few segments
        "/v1/content/p/1.0",
        "/v1/content/p/1.0/",
        "/v1/content/p",
        "/v1/content/",
        "/v1/content",
        "",
        // another prefix
        "/v1/contents/p/1.0/Contents/x",
        "/v2/content/p/1.0/Contents/x",
        "v1/content/p/1.0/Contents/x",
        "//v1/content/p/1.0/Contents/x",
        "/V1/content/p/1.0/Contents/x",
        // invalid product or version
        "/v1/content/bad%20id/1.0/Contents/x",
        "/v1/content/.p/1.0/Contents/x",
        "/v1/content/caf%C3%A9/1.0/Contents/x",
        "/v1/content/p/1%200/Contents/x",
        "/v1/content/p/.1/Contents/x",
        "/v1/content/p/1:0/Contents/x",
        // unsafe file names
        "/v1/content/p/1.0/Contents/caf%C3%A9.pdf",
        "/v1/content/p/1.0/Contents/what%3F.pdf",
        "/v1/content/p/1.0/Contents/a#b",
        "/v1/content/p/1.0/Contents/a%0Ab",
    ])
    func invalidPathsAreRefused(raw: String) {
        #expect(ContentRoutes.parse(rawPath: raw) == nil, "\(raw)")
    }

    @Test func overLongPathsAreRefused() throws {
        let base = "/v1/content/p/1.0/Contents/"
        // A component of 256 bytes.
        #expect(ContentRoutes.parse(rawPath: base + String(repeating: "a", count: 255)) != nil)
        #expect(ContentRoutes.parse(rawPath: base + String(repeating: "a", count: 256)) == nil)
        // A product ID of 256 bytes.
        #expect(
            ContentRoutes.parse(rawPath: "/v1/content/" + String(repeating: "p", count: 256) + "/1.0/Contents/x") == nil
        )
        // A raw path over 2048 bytes, made of short valid components.
        let deep = base + Array(repeating: "abcdefg", count: 260).joined(separator: "/")
        #expect(deep.utf8.count > 2048)
        #expect(ContentRoutes.parse(rawPath: deep) == nil)
        // A file path over 1024 bytes that stays under the raw limit.
        let long = base + Array(repeating: "abcdefg", count: 130).joined(separator: "/")
        #expect(long.utf8.count < 2048)
        #expect(ContentRoutes.parse(rawPath: long) == nil)
        // A raw path over 2048 bytes only because of percent encoding (it decodes to 839 bytes).
        let encoded = base + Array(repeating: String(repeating: "%61", count: 5), count: 140).joined(separator: "/")
        #expect(encoded.utf8.count > 2048)
        #expect(ContentRoutes.parse(rawPath: encoded) == nil)
        let decodedForm = try #require(encoded.removingPercentEncoding)
        #expect(ContentRoutes.parse(rawPath: decodedForm) != nil, "the same path unencoded is fine")
    }

    @Test(arguments: [
        "Contents/issue.pdf", "Contents/My Issue.pdf", "Contents/a+b.pdf", "Contents/a,b.pdf", "Contents/(1).pdf",
        "Contents/dir with space/x (2), final+.bin", "Contents/a b/c d/e f", "Contents/   spaced   ",
        "Contents/a-b_c.d", "Contents/x,y+(z)",
    ])
    func contentURLRoundTripsThroughParse(path: String) throws {
        #expect(Identifiers.isValidFilePath(path))
        let url = GrantURLs.content(product: Self.product, version: "1.0", path: path)
        #expect(url.hasPrefix("/v1/content/\(Self.product)/1.0/Contents/"))
        #expect(!url.contains(" "), "spaces are percent-encoded: \(url)")
        #expect(URL(string: "http://localhost" + url) != nil, "\(url) is a valid URL path")
        let parsed = try #require(ContentRoutes.parse(rawPath: url))
        #expect(parsed == Path(productID: Self.product, version: "1.0", filePath: path))
    }

    @Test func contentURLEncodesEachSegmentButNotTheSlashes() {
        let url = GrantURLs.content(product: "p", version: "1.0", path: "Contents/a b/c d.pdf")
        #expect(url == "/v1/content/p/1.0/Contents/a%20b/c%20d.pdf")
    }

    // MARK: Requests

    static func request(_ path: String, authorization: String? = nil) -> Request {
        var fields = HTTPFields()
        if let authorization { fields[.authorization] = authorization }
        let head = HTTPRequest(method: .get, scheme: "http", authority: "localhost", path: path, headerFields: fields)
        return Request(head: head, body: RequestBody(buffer: ByteBuffer()))
    }

    @Test(arguments: [
        "/v1/content/p/1.0/Contents/%2e%2e/x", "/v1/content/p/1.0/Contents/a%2fb", "/v1/content/p/1.0/Contents/a%00",
    ])
    func theRouterHandsParseTheRawStillEncodedPath(path: String) {
        // parse(rawPath:) relies on receiving the path before percent-decoding.
        let request = Self.request(path + "?token=x")
        #expect(request.uri.path == path)
        #expect(ContentRoutes.parse(rawPath: request.uri.path) == nil)
    }

    @Test func anEncodedSpaceReachesParseEncoded() {
        let request = Self.request("/v1/content/p/1.0/Contents/My%20Issue.pdf?token=x")
        #expect(ContentRoutes.parse(rawPath: request.uri.path)?.filePath == "Contents/My Issue.pdf")
    }

    @Test(
        arguments: [
            ("Bearer abc", nil, "abc"),
            ("bearer abc", nil, "abc"),
            ("BEARER   abc  ", nil, "abc"),
            ("Bearer v1.k1.e30.mac-_", nil, "v1.k1.e30.mac-_"),
            ("Bearer header", "query", "header"),
            ("Basic dXNlcjpwYXNz", "query", "query"),
            ("Basic dXNlcjpwYXNz", nil, nil),
            ("Bearer", "query", "query"),
            ("Bearer ", nil, nil),
            ("  Bearer abc", nil, "abc"),
            ("Bearer\tabc", "query", "query"),
            ("Bearerx abc", nil, nil),
            ("Bear abc", "query", "query"),
            ("Bearer \u{00A0}abc", nil, "abc"),
            (nil, "query", "query"),
            (nil, "v1.k1.e30.mac-_", "v1.k1.e30.mac-_"),
            (nil, nil, nil),
        ] as [(String?, String?, String?)])
    func tokenComesFromTheBearerHeaderOrTheQuery(authorization: String?, query: String?, expected: String?) {
        let path = "/v1/content/p/1.0/Contents/x" + (query.map { "?a=1&token=\($0)" } ?? "")
        let request = Self.request(path, authorization: authorization)
        #expect(request.bearerToken == expected)
    }

    @Test(arguments: [
        "abc", "  abc  ", "\tabc\t", "\u{00A0}abc\u{3000}", "\nabc\n", " a b ", "   ", "", "\u{2003}é\u{2009}",
    ])
    func theTokenIsTrimmedAsFoundationTrimsWhitespace(text: String) {
        #expect(BearerToken.trimmingWhitespace(text[...]) == text.trimmingCharacters(in: .whitespaces))
    }

    /// The event loop's reading of `?token=` is Hummingbird's, whatever the query looks like.
    @Test(arguments: [
        "/c", "/c?", "/c?token", "/c?token=", "/c?token=abc", "/c?a=1&token=v1.x.y-z_w", "/c?token=a&token=b",
        "/c?atoken=1&tokens=2", "/c?&&token=x&", "/c?token=a%2Eb", "/c?token=a+b", "/c?token=a#frag",
        "/c?x=%zz&token=t",
        "/c?token=a=b", "/c?TOKEN=a", "/c??token=a", "/c?a=1", "/c?token=caf\u{00E9}",
    ])
    func theQueryTokenIsReadAsHummingbirdReadsIt(target: String) {
        #expect(BearerToken.queryToken(in: target) == URI(target).queryParameters.get("token"))
    }

    // MARK: Accept-Encoding

    @Test(
        arguments: [
            ("gzip", true),
            ("GZIP", true),
            ("Gzip", true),
            ("x-gzip", true),
            ("*", true),
            ("gzip, deflate, br", true),
            ("br, gzip", true),
            ("deflate, gzip;q=1.0", true),
            ("gzip; q=0.5", true),
            ("gzip;q=0.001", true),
            ("gzip ; q=0.5", true),
            ("*;q=0.1", true),
            ("gzip;q=0", false),
            ("gzip;q=0.0", false),
            ("gzip; q=0.000", false),
            ("GZIP;Q=0", false),
            ("gzip;q=0, *", false),
            ("br", false),
            ("identity", false),
            ("deflate, br", false),
            ("gzipper", false),
            ("*;q=0", false),
            ("", false),
            ("GZip", true),
            ("x-gzip;q=0.5", true),
            ("\tgzip\t", true),
            (",, gzip ,", true),
            ("gzip;q=.5", true),
            ("gzip;Q=1", true),
            ("gzip;level=9;q=0", false),
            ("gzip;q=1;q=0", true),
            ("gzip;q=abc", false),
            ("gzip;q=0.5.1", false),
            ("gzip;q=", false),
            ("gzip;q", true),
            ("x-gzip;q=0, *", false),
        ] as [(String, Bool)])
    func acceptsGzip(header: String, expected: Bool) {
        #expect(ContentNegotiation.acceptsGzip(header) == expected, "\(header)")
    }

    @Test func noAcceptEncodingMeansNoGzip() {
        #expect(ContentNegotiation.acceptsGzip(nil) == false)
    }

    @Test(
        arguments: [
            ("*, gzip;q=0", false),  // gzip explicitly refused; '*' covers only codings not listed
            ("*;q=0, gzip", true),  // gzip explicitly accepted
        ] as [(String, Bool)])
    func explicitGzipEntryWinsOverWildcard(header: String, expected: Bool) {
        #expect(ContentNegotiation.acceptsGzip(header) == expected, "\(header)")
    }
}

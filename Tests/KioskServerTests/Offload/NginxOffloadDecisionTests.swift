import Foundation
import HTTPTypes
import Hummingbird
import KioskCore
import NIOCore
import Testing

@testable import KioskServer

/// Which content requests ``NginxOffload`` hands to nginx, and where: without nginx, so that the decision table is
/// checked wherever the tests run (the end-to-end `NginxOffloadTests` check nginx's answers against Kiosk's).
@Suite("Offload: which requests nginx sends")
struct NginxOffloadDecisionTests {
    /// A body that is never sent: a decision only.
    struct NoBody: RangedBody {
        func body(segments: [FileBody.Segment], contentLength: Int64, faults: FaultyBodyWriter?) -> ResponseBody {
            ResponseBody()
        }
    }

    static let lastModified = Date(timeIntervalSince1970: 1_767_225_600)
    static let eTag = "\"\(String(repeating: "ab", count: 32))\""
    static let resource = RangeResponder.Resource(
        representation: RepresentationMetadata(
            length: 1000, entityTag: EntityTag(parsing: eTag)!, lastModified: lastModified),
        entityTagHeader: eTag, lastModifiedHeader: HTTPDate.format(lastModified),
        extraHeaders: [HTTPField.Name("Repr-Digest")!: "sha-256=:x:"], contentType: "application/pdf", noun: "file",
        answersMultipleRanges: true, body: NoBody())
    static let path = ContentPath(productID: "com.example.p", version: "1.0", filePath: "Contents/a b+c.pdf")

    static let offload = NginxOffload(
        prefix: "/_kiosk/files", evaluator: RangeRequestEvaluator(), now: { Date() },
        metrics: ServerMetrics())

    /// Where `headers` go: `full`, `range`, or nil for Kiosk.
    static func decision(_ headers: [(String, String)], isHead: Bool = false) -> String? {
        var fields = HTTPFields()
        for (name, value) in headers { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        let head = HTTPRequest(
            method: isHead ? .head : .get, scheme: "http", authority: "localhost", path: "/v1/content/x",
            headerFields: fields)
        let request = Request(head: head, body: RequestBody(buffer: ByteBuffer()))
        guard let response = offload.redirect(request, isHead: isHead, resource: resource, path: path) else {
            return nil
        }
        let target = response.headers[NginxOffload.accelRedirect] ?? ""
        return target.hasPrefix("/_kiosk/files-full/") ? "full" : target.hasPrefix("/_kiosk/files/") ? "range" : target
    }

    @Test(
        arguments: [
            ([], "full"),
            ([("Range", "bytes=0-9")], "range"),
            ([("Range", "bytes=-10")], "range"),
            ([("Range", "bytes=990-")], "range"),
            ([("Range", "bytes=0-9"), ("If-Range", eTag)], "range"),
            ([("Range", "bytes=0-9"), ("If-Range", HTTPDate.format(lastModified))], "range"),
            ([("Range", "bytes=0-9"), ("If-Range", "\"other\"")], "full"),
        ([("Range", "bytes=0-9"), ("If-Range", "W/\(eTag)")], "full"),
            ([("Range", "bytes=9-0")], "full"),
            ([("Range", "bytes=0-0,0-0,0-999")], "full"),
            ([("If-None-Match", "\"other\"")], "full"),
            ([("If-Modified-Since", HTTPDate.format(lastModified.addingTimeInterval(-1)))], "full"),
            ([("If-None-Match", "\"other\""), ("Range", "bytes=0-9")], "range"),
        ] as [([(String, String)], String)])
    func nginxSends(headers: [(String, String)], location: String) {
        #expect(Self.decision(headers) == location)
    }

    @Test(
        arguments: [
            [("If-None-Match", eTag)],
            [("If-Modified-Since", HTTPDate.format(lastModified))],
            [("If-Match", eTag)],
            [("If-Match", "\"other\"")],
            [("If-Unmodified-Since", HTTPDate.format(lastModified))],
            [("Range", "bytes=0-4,10-19")],
            [("Range", "bytes=1000-")],
            [("Range", "BYTES=0-9")],
            [("Range", "bytes=0-9,2000-")],
                [("Range", "bytes=0-9"), ("If-Range", "Thursday, 01-Jan-26 00:00:00 GMT")],
        ] as [[(String, String)]])
    func kioskAnswers(headers: [(String, String)]) {
        #expect(Self.decision(headers) == nil)
    }

    @Test func headStaysWithKiosk() {
        #expect(Self.decision([], isHead: true) == nil)
    }

    @Test func theRedirectCarriesKiosksHeadersAndTheEncodedPath() throws {
        let request = Request(
            head: HTTPRequest(method: .get, scheme: "http", authority: "localhost", path: "/v1/content/x"),
            body: RequestBody(buffer: ByteBuffer()))
        let response = try #require(
            Self.offload.redirect(request, isHead: false, resource: Self.resource, path: Self.path))
        #expect(response.status == .ok)
        #expect(
            response.headers[NginxOffload.accelRedirect]
                == "/_kiosk/files-full/com.example.p/1.0/Contents/a%20b%2Bc.pdf")
        #expect(response.headers[.eTag] == Self.eTag)
        #expect(response.headers[.lastModified] == HTTPDate.format(Self.lastModified))
        #expect(response.headers[.contentType] == "application/pdf")
        #expect(response.headers[.cacheControl] == "private")
        #expect(response.headers[.acceptRanges] == "bytes")
        #expect(response.headers[HTTPField.Name("Repr-Digest")!] == "sha-256=:x:")
    }

    @Test func aFaultSpecIsRefused() {
        for path in ["/v1/content/x?fault=cut%3D1", "/v1/content/x"] {
            var fields = HTTPFields()
            if !path.contains("?") { fields[FaultInjector.headerName] = "cut=1" }
            let request = Request(
                head: HTTPRequest(method: .get, scheme: "http", authority: "l", path: path, headerFields: fields),
                body: RequestBody(buffer: ByteBuffer()))
            #expect(throws: APIError.self) { try Self.offload.refuseFaults(in: request) }
        }
        let plain = Request(
            head: HTTPRequest(method: .get, scheme: "http", authority: "l", path: "/v1/content/x"),
            body: RequestBody(buffer: ByteBuffer()))
        #expect(throws: Never.self) { try Self.offload.refuseFaults(in: plain) }
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import KioskCore
import NIOCore

/// Answers a `GET` or `HEAD` of one representation (a content file, a pack) the way RFC 9110 asks: the
/// preconditions first (304, 412), then `Range` and `If-Range` (200, 206 with one range or `multipart/byteranges`,
/// 416), then the body, with the injected faults of ``ResponseFaults`` at each step when a request has them. The
/// content and pack routes admit a request and name what it asks for; this answers it.
struct RangeResponder: Sendable {
    /// Decides what a `Range` asks for.
    let evaluator: RangeRequestEvaluator
    /// The size of the pieces a body is read in when it cannot go out with `sendfile`.
    let chunkSize: Int
    /// How long one piece of a body may wait for a client that does not read.
    let sendTimeout: Duration
    /// Counts the streams and bytes sent, and the faults injected.
    let metrics: ServerMetrics
    /// The time the preconditions and `If-Range` are evaluated at.
    let now: @Sendable () -> Date

    /// What a route asks to answer.
    struct Resource {
        /// Its length and validators.
        var representation: RepresentationMetadata
        /// `ETag`, as ``representation`` formats it (a content file's is formatted once, when it is opened).
        var entityTagHeader: String
        /// `Last-Modified`, as ``representation`` formats it.
        var lastModifiedHeader: String
        /// Fields every answer carries after the validators, `Accept-Ranges` and `Cache-Control` (`Repr-Digest`).
        var extraHeaders: HTTPFields = [:]
        /// `Content-Type` of the whole representation and of each part of a multipart answer.
        var contentType: String
        /// What the 416 message calls it: `file`, `pack`.
        var noun: String
        /// Whether several ranges get a `multipart/byteranges` answer; if not, they get the whole representation,
        /// which RFC 9110 §14.2 allows.
        var answersMultipleRanges: Bool
        /// For a server-wide corruption: whether the byte at this offset of the representation may be corrupted
        /// (nil: any may). Asked of single-range and whole answers only.
        var mayCorrupt: (@Sendable (Int64) -> Bool)?
        /// Sends the representation's bytes.
        var body: any RangedBody
        /// The SHA-256 of the representation's changed version (``ChangedVersion``), for an answer under `changed`
        /// whose representation carries a `Repr-Digest` (the route computes it: ``ChangedDigests``).
        var changedDigest: SHA256Digest?

        /// The fields every answer carries (a 304 too): the validators, `Accept-Ranges`, `Cache-Control` and
        /// ``extraHeaders``.
        var headers: HTTPFields {
            Self.headers(entityTag: entityTagHeader, lastModified: lastModifiedHeader, extra: extraHeaders)
        }

        /// The fields every answer for a representation with these validators carries (``headers``).
        static func headers(entityTag: String, lastModified: String, extra: HTTPFields) -> HTTPFields {
            var headers: HTTPFields = [
                .eTag: entityTag,
                .lastModified: lastModified,
                .acceptRanges: "bytes",
                .cacheControl: "private",
            ]
            headers.append(contentsOf: extra)
            return headers
        }
    }

    /// The answer to `request` for `resource`: a response, or a thrown 412 or 416.
    func respond(
        to request: Request, isHead: Bool, resource: Resource, faults: ResponseFaults?, channel: any Channel
    ) throws -> Response {
        let currentTime = now()
        var representation = resource.representation
        var headers = resource.headers
        if let faults {
            faults.changeVersion(of: &representation, headers: &headers, digest: resource.changedDigest)
            faults.changeValidators(of: &representation, now: currentTime)
            headers[.eTag] = representation.entityTag.headerValue
            headers[.lastModified] = HTTPDate.format(representation.lastModified)
        }
        // RFC 9110 §13.2.2: the preconditions, against the validators sent, before Range and If-Range.
        if let answer = try RequestPreconditions.answer(
            to: request, representation: representation, headers: headers, now: currentTime)
        {
            return answer
        }
        headers[.contentType] = resource.contentType
        let range = faults.map { $0.range(request.headers[.range], isHead: isHead) } ?? request.headers[.range]
        try faults?.refuseRange(range, completeLength: representation.length)
        let ifRange = faults.map { $0.ifRange(request.headers[.ifRange]) } ?? request.headers[.ifRange]
        let decision = evaluator.evaluate(
            method: isHead, range: range, ifRange: ifRange, representation: representation, now: currentTime)
        let length = representation.length
        let answer = Answer(resource: resource, faults: faults, channel: channel)
        switch decision {
        case .multiple(let ranges) where resource.answersMultipleRanges:
            guard
                let plan = MultipartByteRangesPlan(
                    ranges: ranges, completeLength: length, partContentType: resource.contentType,
                    boundary: MultipartByteRangesPlan.randomBoundary())
            else { throw APIError(.internalError, "The multipart answer could not be planned.") }
            headers[.contentType] = plan.contentType
            return answer.response(
                .partialContent, headers: headers, segments: plan.segments, contentLength: plan.contentLength,
                from: nil)
        case .full, .multiple:
            if isHead {
                headers[.contentLength] = String(length)
                return Response(status: .ok, headers: headers)
            }
            let whole: [FileBody.Segment] = length > 0 ? [.file(ByteRange(first: 0, last: length - 1))] : []
            return answer.response(.ok, headers: headers, segments: whole, contentLength: length, from: 0)
        case .single(let range):
            if let faults {
                headers[.contentRange] = faults.contentRange(range, completeLength: length)
            } else {
                headers[.contentRange] = ContentRange.satisfied(range, completeLength: length).headerValue
            }
            return answer.response(
                .partialContent, headers: headers, segments: [.file(range)], contentLength: range.length,
                from: range.first)
        case .unsatisfiable:
            throw APIError(
                .rangeNotSatisfiable,
                "The requested range is outside the \(resource.noun), which is \(length) bytes long.",
                headers: [
                    "Content-Range": ContentRange.unsatisfied(completeLength: length).headerValue,
                    "Accept-Ranges": "bytes",
                ])
        }
    }

    /// A body for an open content file, sent with `sendfile` on `channel` (nil: through the body writer).
    func fileBody(_ file: OpenContentFile, channel: (any Channel)?) -> FileBody {
        FileBody(file: file, chunkSize: chunkSize, sendTimeout: sendTimeout, metrics: metrics, channel: channel)
    }

    /// A body for a product version's pack, its files opened through `access` as they are sent.
    func packBody(
        product: CatalogProduct, pack: ProductPack, access: ContentAccess, channel: any Channel
    ) -> PackBody {
        PackBody(
            product: product, pack: pack, access: access, chunkSize: chunkSize, sendTimeout: sendTimeout,
            metrics: metrics, channel: channel)
    }

    /// One answer with a body: the body's segments through the response's faults.
    private struct Answer {
        let resource: Resource
        let faults: ResponseFaults?
        let channel: any Channel

        /// `status` with `segments` as its body; `start` is where a single range or the whole representation
        /// starts (nil for a multipart answer), which tells ``Resource/mayCorrupt`` where a corrupted byte falls.
        func response(
            _ status: HTTPResponse.Status, headers: HTTPFields, segments: [FileBody.Segment], contentLength: Int64,
            from start: Int64?
        ) -> Response {
            let mayCorrupt = start.flatMap { start in
                resource.mayCorrupt.map { mayCorrupt in { offset in mayCorrupt(start + offset) } }
            }
            let writer = faults?.bodyWriter(length: contentLength, channel: channel, mayCorrupt: mayCorrupt)
            var headers = headers
            if let announced = faults?.announcedLength(of: contentLength) {
                headers[.contentLength] = String(announced)
            }
            var body = resource.body.body(segments: segments, contentLength: contentLength, faults: writer)
            if writer != nil, let faults, faults.gzipsBody() {
                headers[.contentEncoding] = "gzip"
                body = GzipBodyWriter.encoding(body)
            }
            return Response(status: status, headers: headers, body: body)
        }
    }
}

/// The bytes a ``RangeResponder`` answer sends: a content file's (``FileBody``) or a pack's (``PackBody``).
protocol RangedBody: Sendable {
    /// A body of `contentLength` bytes made of `segments` (ranges of the representation and, in a multipart answer,
    /// the bytes between the parts), written through `faults` when given.
    func body(segments: [FileBody.Segment], contentLength: Int64, faults: FaultyBodyWriter?) -> ResponseBody
}

extension HTTPField.Name {
    /// `Repr-Digest` (RFC 9530): the digest of the whole file, on every content answer.
    static let reprDigest = HTTPField.Name("Repr-Digest")!
}

import Foundation
import HTTPTypes
import Hummingbird
import KioskCore
import Logging
import NIOCore

/// The faults chosen for one content request, applied at each step of answering it: a slow first byte and an
/// error status before anything else, a changed `ETag` and an ignored `Range` while the answer is planned, and
/// the byte-stream faults while the body is written.
struct ResponseFaults {
    /// The envelope code of an injected error status.
    static let errorCode = "fault_injected"

    let spec: FaultSpec
    let injector: FaultInjector
    let metrics: ServerMetrics
    let logger: Logger

    /// The faults `injector` chooses for one response (``FaultInjector/faults(requested:download:)``), or nil for
    /// none.
    init?(
        injector: FaultInjector, requested: FaultSpec?, download: Int?, metrics: ServerMetrics, logger: Logger
    ) {
        guard let spec = injector.faults(requested: requested, download: download) else { return nil }
        self.spec = spec
        self.injector = injector
        self.metrics = metrics
        self.logger = logger
    }

    /// Waits for `first-byte`, then resets the connection on `channel`, or answers the injected status, error page,
    /// expiry or redirect, if the spec asks (nil: go on answering the content).
    func beforeResponse(to request: Request, channel: any Channel) async throws -> Response? {
        if let delay = spec.firstByte {
            record(.firstByte, ["delay": "\(FaultSpec.format(delay))"])
            try await Task.sleep(for: delay)
        }
        if spec.reset {
            record(.reset, [:])
            // SO_LINGER with a zero timeout: the close sends RST, not FIN, and nothing of the answer goes out.
            if let socket = channel as? any SocketOptionProvider {
                try? await socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
            }
            try? await channel.close()
            // Never sent: the status nginx logs for a connection closed without an answer, for the metrics.
            return Response(status: .init(code: 444, reasonPhrase: "No Response"))
        }
        if spec.errorPage {
            record(.errorPage, [:])
            return Self.errorPage
        }
        if spec.expire {
            record(.expire, [:])
            return Self.expired
        }
        if let redirect = spec.redirect {
            record(.redirect, ["to": "\(redirect.rawValue)"])
            return Self.redirect(request, to: redirect)
        }
        guard let status = spec.status else { return nil }
        record(.status, ["status": "\(status.code)"])
        var headers = HTTPFields()
        if let retryAfter = status.retryAfter { headers[.retryAfter] = String(retryAfter) }
        let envelope = APIErrorEnvelope(
            code: Self.errorCode,
            message: "The server was asked to answer \(status.code) by fault injection; try again.")
        return try JSONIO.response(envelope, status: .init(code: status.code), headers: headers)
    }

    /// With `changed`, gives the representation the changed version's validators (``ChangedVersion``): its strong
    /// `ETag` (`digest`, its SHA-256, when the route computed it; the tag with ``ChangedVersion/tagSuffix``
    /// otherwise), a `Last-Modified` ``ChangedVersion/lastModifiedShift`` later, and, in `headers`, those two and
    /// the `Repr-Digest` of `digest` (a `Repr-Digest` whose changed digest is not known is dropped rather than left
    /// describing the other version). The preconditions are then evaluated against them, as the server holding the
    /// new version does; only `If-Range` is ignored (``ifRange(_:)``).
    func changeVersion(
        of representation: inout RepresentationMetadata, headers: inout HTTPFields, digest: SHA256Digest?
    ) {
        guard spec.changed else { return }
        if let digest {
            representation.entityTag = EntityTag.content(sha256: digest.hexString)!  // hex digits
        } else {
            let tag = representation.entityTag.opaqueTag + ChangedVersion.tagSuffix
            representation.entityTag = EntityTag(opaqueTag: tag, isWeak: representation.entityTag.isWeak)!
        }
        representation.lastModified += ChangedVersion.lastModifiedShift
        headers[.eTag] = representation.entityTag.headerValue
        headers[.lastModified] = HTTPDate.format(representation.lastModified)
        if headers[.reprDigest] != nil { headers[.reprDigest] = digest.map { "sha-256=:\($0.base64):" } }
        record(.changed, [:])
    }

    /// The `If-Range` header to evaluate: nil with `changed`, so that a range is answered from the changed version
    /// whatever validators the client sends, as a CDN that stitches a new version into an old download does.
    func ifRange(_ header: String?) -> String? {
        spec.changed ? nil : header
    }

    /// Whether the body goes out gzipped (`gzip-range`), counted as injected when it does: the answer then carries
    /// `Content-Encoding: gzip` and no `Content-Length` (it is chunked), and a 206 keeps the `Content-Range` of the
    /// uncompressed range. Only a body written through ``bodyWriter(length:channel:mayCorrupt:)`` is gzipped.
    func gzipsBody() -> Bool {
        guard spec.gzipRange else { return false }
        record(.gzipRange, [:])
        return true
    }

    /// With `etag-change`, gives the representation a new `ETag` and a `Last-Modified` of now, as if the file had
    /// just changed: an `If-Range` with the old validators no longer holds, so a resumed request gets the whole file.
    /// With `node=N`, gives it node N's validators (``FaultSpec/ValidatorNode``).
    func changeValidators(of representation: inout RepresentationMetadata, now: Date) {
        if let node = spec.node {
            let tag = representation.entityTag.opaqueTag + "-n" + String(node.number)
            // Digits, '-' and 'n' are valid entity-tag characters.
            representation.entityTag = EntityTag(opaqueTag: tag, isWeak: node.isWeak)!
            representation.lastModified += TimeInterval(node.number)
            record(.node, ["node": "\(node.number)\(node.isWeak ? "/weak" : "")"])
        }
        guard spec.etagChange else { return }
        let tag = representation.entityTag.opaqueTag + "-f" + String(injector.nonce(), radix: 16)
        // Hex digits, '-' and 'f' are valid entity-tag characters.
        representation.entityTag = EntityTag(opaqueTag: tag)!
        representation.lastModified = now
        record(.etagChange, [:])
    }

    /// The `Content-Length` to announce for a body of `length` bytes under `length-lie` (a tenth more or less, at
    /// least one byte), or nil to announce the truth.
    func announcedLength(of length: Int64) -> Int64? {
        guard let lie = spec.lengthLie, length > 0 else { return nil }
        let error = max(1, length / 10)
        return lie == .short ? length + error : length - error
    }

    /// Refuses a range request with 416 when the spec says `refuse-range`, whatever the range asks.
    func refuseRange(_ header: String?, completeLength: Int64) throws {
        guard spec.refuseRange, header != nil else { return }
        record(.refuseRange, [:])
        throw APIError(
            .rangeNotSatisfiable, "The server was asked to refuse this range by fault injection.",
            headers: [
                "Content-Range": ContentRange.unsatisfied(completeLength: completeLength).headerValue,
                "Accept-Ranges": "bytes",
            ])
    }

    /// The `Content-Range` of a single range's 206 under the spec: none with `no-content-range`, one byte off with
    /// `range-off-by-one`.
    func contentRange(_ range: ByteRange, completeLength: Int64) -> String? {
        switch spec.contentRange {
        case nil:
            return ContentRange.satisfied(range, completeLength: completeLength).headerValue
        case .missing:
            record(.noContentRange, [:])
            return nil
        case .offByOne:
            record(.rangeOffByOne, [:])
            return "bytes \(range.first + 1)-\(range.last + 1)/\(completeLength)"
        }
    }

    /// A `307` to the same path and query, at the other loopback origin for `origin` (`127.0.0.1` and `localhost`
    /// swapped, other hosts sent to `127.0.0.1`: a different origin on the same server), at the same URL for `loop`.
    static func redirect(_ request: Request, to redirect: FaultSpec.Redirect) -> Response {
        let authority = request.head.authority ?? "127.0.0.1"
        // "127.0.0.1:8080", "localhost:8080", "[::1]:8080": the name, and the port with its colon.
        var name = Substring(authority)
        var port: Substring = ""
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]"),
            authority[authority.index(after: colon)...].allSatisfy(\.isNumber)
        {
            name = authority[..<colon]
            port = authority[colon...]
        }
        let target: String
        switch redirect {
        case .loop: target = authority
        case .origin: target = (name == "127.0.0.1" ? "localhost" : "127.0.0.1") + port
        }
        let location = "http://\(target)\(request.uri.description)"
        return Response(status: .temporaryRedirect, headers: [.location: location, .cacheControl: "no-store"])
    }

    /// The answer of `expire`: what an object store sends for a presigned URL past its expiry (403, an XML error).
    static var expired: Response {
        let xml =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code>"
            + "<Message>Request has expired</Message></Error>\n"
        return Response(
            status: .forbidden, headers: [.contentType: "application/xml", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: xml)))
    }

    /// The page of `error-page`: what a captive portal, a proxy or a CDN sends with status 200 when it cannot reach
    /// the origin (about 4 KiB of HTML, with no validators and no ranges).
    static var errorPage: Response {
        Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: errorPageHTML)))
    }

    private static let errorPageHTML =
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Service Temporarily Unavailable"
        + "</title></head>\n<body><h1>Service Temporarily Unavailable</h1>\n<p>The server is temporarily unable to "
        + "service your request. Please try again later.</p>\n<p>Reference: kiosk-fault error-page</p>\n"
        + String(repeating: "<!-- as long as a real error page: proxies and CDNs send a few KiB -->\n", count: 56)
        + "</body></html>\n"

    /// The `Range` header to evaluate: nil with `ignore-range`, so the answer is the whole file.
    func range(_ header: String?, isHead: Bool) -> String? {
        guard spec.ignoreRange, header != nil else { return header }
        if !isHead { record(.ignoreRange, [:]) }
        return nil
    }

    /// The writer applying the byte-stream faults to a body of `length` bytes, or nil when none falls inside it
    /// (the body then keeps the `sendfile` path). `mayCorrupt` decides, given the body offset drawn, whether the
    /// corruption happens (a pack's: once per purchase and file).
    func bodyWriter(length: Int64, channel: any Channel, mayCorrupt: ((Int64) -> Bool)? = nil) -> FaultyBodyWriter? {
        guard spec.altersBodyStream, var faults = injector.bodyFaults(spec, length: length) else { return nil }
        if let corruptAt = faults.corruptAt, let mayCorrupt, !mayCorrupt(corruptAt) {
            faults.corruptAt = nil
            if faults.isEmpty { return nil }
        }
        return FaultyBodyWriter(faults: faults, metrics: metrics, logger: logger, channel: channel)
    }

    private func record(_ kind: FaultKind, _ metadata: Logger.Metadata) {
        FaultInjector.record(kind, metadata: metadata, metrics: metrics, logger: logger)
    }
}

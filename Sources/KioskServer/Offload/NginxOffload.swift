import Foundation
import HTTPTypes
import Hummingbird
import KioskCore

/// `--offload nginx:PREFIX`: for a content request Kiosk has admitted (token, scope, revocation), the answer that
/// hands the file to nginx, `X-Accel-Redirect: PREFIX…/<product>/<version>/<path>`, when nginx's answer is exactly
/// the one Kiosk would give; otherwise nil, and Kiosk answers itself, through nginx's proxy.
///
/// nginx judges a request's conditional headers itself, after the redirect, against validators of its own: with
/// `etag off` it has no entity-tag (`If-Match` always fails there) and it compares `If-Unmodified-Since` against the
/// file's modification time. `If-Range` and `Range` it judges against the `ETag` and `Last-Modified` its
/// `add_header` restores from Kiosk's answer. So a request goes to nginx only when it has neither `If-Match` nor
/// `If-Unmodified-Since`, its other preconditions hold (304 is Kiosk's), and Kiosk's range decision is either
///
/// - the whole file (no `Range`, or one Kiosk ignores, or a failed `If-Range`): `PREFIX-full/…`, where nginx
///   ignores `Range` and `If-Range` altogether (`max_ranges 0`), or
/// - one range written the one way both read alike (`bytes=F-L`, `bytes=F-`, `bytes=-N`, plain digits), with no
///   `If-Range` or one repeating the `ETag` or `Last-Modified` verbatim: `PREFIX/…`, where nginx sends that range.
///
/// `HEAD` (no body to send), several ranges (`multipart/byteranges`), 416 and every other request stay with Kiosk.
struct NginxOffload: Sendable {
    /// The internal location of single ranges; the one of whole files is this followed by `-full`.
    let prefix: String
    /// Decides what a `Range` asks for, as ``RangeResponder`` does.
    let evaluator: RangeRequestEvaluator
    /// The time the preconditions and `If-Range` are evaluated at.
    let now: @Sendable () -> Date
    /// Counts the answers handed to nginx.
    let metrics: ServerMetrics

    /// The header that hands a file to nginx.
    static let accelRedirect = HTTPField.Name("X-Accel-Redirect")!

    /// Hands files to nginx's internal location `prefix` (``ContentOffload/nginx(prefix:)``), deciding ranges with
    /// `evaluator` at `now`, counting into `metrics`.
    init(
        prefix: String, evaluator: RangeRequestEvaluator, now: @escaping @Sendable () -> Date, metrics: ServerMetrics
    ) {
        self.prefix = prefix
        self.evaluator = evaluator
        self.now = now
        self.metrics = metrics
    }

    /// Refuses a request that asks for injected faults (`Kiosk-Fault`, `?fault=`): nginx sends the bytes and cannot
    /// inject them.
    func refuseFaults(in request: Request) throws(APIError) {
        guard
            request.headers[FaultInjector.headerName] != nil
                || request.uri.queryParameters.get(FaultInjector.queryParameter) != nil
        else { return }
        throw APIError(
            .badRequest,
            "This server hands content to nginx, which cannot inject faults: the request's fault spec is refused.",
            reason: "faults_offloaded")
    }

    /// The `X-Accel-Redirect` answer to `request` for `resource`, the file at `path`; nil when Kiosk answers it.
    func redirect(
        _ request: Request, isHead: Bool, resource: RangeResponder.Resource, path: ContentPath
    ) -> Response? {
        guard !isHead, request.headers[.ifMatch] == nil, request.headers[.ifUnmodifiedSince] == nil else { return nil }
        let currentTime = now()
        let preconditions = RequestPreconditions(
            ifMatch: nil, ifNoneMatch: request.headers[.ifNoneMatch],
            ifModifiedSince: request.headers[.ifModifiedSince], ifUnmodifiedSince: nil)
        guard preconditions.evaluate(for: resource.representation, now: currentTime) == .proceed else { return nil }
        let range = request.headers[.range]
        let ifRange = request.headers[.ifRange]
        let (location, kind): (String, String)
        switch evaluator.evaluate(
            method: false, range: range, ifRange: ifRange, representation: resource.representation, now: currentTime)
        {
        case .full:
            (location, kind) = (prefix + "-full", "full")
        case .single
        where Self.isPlainSingleRange(range)
            && (ifRange == nil || ifRange == resource.entityTagHeader || ifRange == resource.lastModifiedHeader):
            (location, kind) = (prefix, "range")
        case .single, .multiple, .unsatisfiable:
            return nil
        }
        var headers = resource.headers
        headers[.contentType] = resource.contentType
        headers[Self.accelRedirect] =
            [location, path.productID, path.version, path.filePath]
            .map { $0.sigV4Encoded(keepingSlash: true) }.joined(separator: "/")
        metrics.recordOffload(location: kind)
        return Response(status: .ok, headers: headers)
    }

    /// Whether `range` is one range-spec written as ``RangeSpec`` writes it back (`bytes=F-L`, `bytes=F-`,
    /// `bytes=-N`: lower-case unit, no spaces, no leading zeros, no saturated number), which nginx reads as Kiosk does.
    static func isPlainSingleRange(_ range: String?) -> Bool {
        guard let range, let header = RangeHeader(parsing: range), header.specs.count == 1 else { return false }
        let written =
            switch header.specs[0] {
            case .closed(let first, let last): "\(first)-\(last)"
            case .from(let first): "\(first)-"
            case .suffix(let length): "-\(length)"
            }
        return range == "bytes=" + written
    }
}

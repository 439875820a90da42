import CoreMetrics
import HTTPTypes
import Hummingbird
import HummingbirdCore
import KioskCore
import NIOCore
import NIOHTTP1

/// The requests the event loops answer themselves, without a task, the router or the middleware chain: those
/// whose answer depends only on the catalog snapshot, which is encoded once (`GET`/`HEAD /v1/products` with any
/// valid query, `GET`/`HEAD /v1/products/{id}`), `GET /healthz`, and the content requests ``DirectContent``
/// answers (a file already open, sent with `sendfile(2)`).
///
/// A launch-day spike is mostly these: every app asks for the catalog when it starts, and most get a 304. Answered
/// here they cost what a static file server pays (parse, look up, write), not a task, a thread hop and a pipeline
/// of generic middleware. The answers are the routes' own (``CatalogAnswers``), with what the middleware adds to
/// every answer (`X-Request-ID`, `Date`) and the same request metrics. Whatever is not a success here (a bad query,
/// an unknown product, a path the router would decode or normalise) is left to the routes, which answer it with
/// the JSON envelope as always.
///
/// A class: every connection's handler holds it, as one reference.
final class DirectAnswers: Sendable {
    let catalog: CatalogAnswers
    /// The content requests answered here; nil when faults are injected or nginx sends the files.
    let content: DirectContent?
    /// How long one piece of a streamed body may wait for a client that does not read (``SendTimeout``).
    let sendTimeout: Duration
    let metrics: ServerMetrics
    private let health: ReadyAnswer
    /// `kiosk_http_direct_answers_total`, by route.
    private let counters: [Route: CoreMetrics.Counter]

    /// The request metrics' route labels (the routes' patterns, as the router names them).
    enum Route: String, Sendable, CaseIterable {
        case products = "/v1/products"
        case product = "/v1/products/{id}"
        case health = "/healthz"
        case content = "/v1/content/**"
    }

    init(catalog: CatalogAnswers, content: DirectContent?, sendTimeout: Duration, metrics: ServerMetrics) {
        self.catalog = catalog
        self.content = content
        self.sendTimeout = sendTimeout
        self.metrics = metrics
        self.counters = Dictionary(
            uniqueKeysWithValues: Route.allCases.map { ($0, metrics.directAnswers(route: $0.rawValue)) })
        // Encoding one string cannot fail.
        let body = (try? KioskJSON.encode(HealthResponse())).map { ByteBuffer(bytes: $0) } ?? ByteBuffer()
        self.health = ReadyAnswer(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: body)
    }

    /// Counts an answer given for `route` (in the request metrics too). `last` is the caller's memo of the series
    /// it recorded last (a connection's requests are mostly alike): the same series again is recorded without a
    /// lookup.
    func record(
        method: HTTPMethod, route: Route, status: Int, duration: Duration, last: inout RecordedSeries?
    ) {
        if let last, last.method == method, last.route == route, last.status == status {
            last.request.record(duration)
            last.direct.increment()
            return
        }
        let series = RecordedSeries(
            method: method, route: route, status: status,
            request: metrics.requestSeries(method: method.rawValue, route: route.rawValue, status: status),
            direct: counters[route] ?? metrics.directAnswers(route: route.rawValue))
        series.request.record(duration)
        series.direct.increment()
        last = series
    }

    /// One series of direct answers and its handles (``record(method:route:status:duration:last:)``).
    struct RecordedSeries {
        let method: HTTPMethod
        let route: Route
        let status: Int
        let request: RequestSeriesHandles
        let direct: CoreMetrics.Counter
    }

    /// The answer to `request`, or nil when the routes must answer it.
    func answer(to request: HTTPRequestHead) -> (answer: DirectAnswer, route: Route)? {
        let isHead: Bool
        switch request.method {
        case .GET: isHead = false
        case .HEAD: isHead = true
        default: return nil
        }
        let target = request.uri
        let path = target[..<(target.utf8.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex)]
        let hasQuery = path.endIndex != target.endIndex
        guard !path.utf8.contains(UInt8(ascii: "%")) else { return nil }
        switch path {
        case "/healthz":
            return isHead ? nil : (.ready(health), .health)
        case "/v1/products":
            // Most of a spike's requests carry no query: nothing to parse then.
            guard
                let representation = hasQuery ? try? catalog.products(query: URI(target).queryParameters) : catalog.all
            else { return nil }
            return (.ready(Self.answer(representation, to: request, isHead: isHead)), .products)
        case _ where path.hasPrefix(GrantURLs.contentPrefix):
            guard let content, let answer = content.answer(to: request, path: path, isHead: isHead) else { return nil }
            return (.file(answer), .content)
        default:
            let prefix = "/v1/products/"
            guard path.hasPrefix(prefix), !hasQuery else { return nil }
            let id = path.dropFirst(prefix.count)
            guard !id.contains("/"), let representation = try? catalog.product(id: String(id)) else { return nil }
            return (.ready(Self.answer(representation, to: request, isHead: isHead)), .product)
        }
    }

    private static func answer(_ representation: CatalogRepresentation, to request: HTTPRequestHead, isHead: Bool)
        -> ReadyAnswer
    {
        CatalogAnswers.answer(
            with: representation, acceptEncoding: request.headers.joinedValue(of: "Accept-Encoding"),
            ifNoneMatch: request.headers.joinedValue(of: "If-None-Match"), isHead: isHead)
    }
}

import CoreMetrics
import Foundation
import NIOConcurrencyHelpers
import Prometheus

/// The figures an operator watches, kept per server instance in its own Prometheus registry and exposed in the
/// Prometheus text format on `/metrics`.
public final class ServerMetrics: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory

    /// Bytes of content written to clients.
    private let contentBytesSent: CoreMetrics.Counter
    private let contentBytesSentTotal = NIOLockedValueBox<Int64>(0)
    /// Bytes read from content files to cut chunks into subchunks, and the chunks cut.
    private let subchunkWork = NIOLockedValueBox<(bytes: Int64, chunks: Int)>((0, 0))
    /// Content responses streaming right now.
    public let activeStreams: CoreMetrics.Meter

    /// Creates a fresh registry.
    public init() {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        self.factory = PrometheusMetricsFactory(registry: registry)
        contentBytesSent = Counter(label: "kiosk_content_bytes_sent_total", factory: factory)
        activeStreams = Meter(label: "kiosk_content_active_streams", factory: factory)
    }

    /// Counts content bytes written to a client.
    func countContentBytes(_ count: Int) {
        contentBytesSent.increment(by: count)
        contentBytesSentTotal.withLockedValue { $0 += Int64(count) }
    }

    /// Counts the bytes of a subchunk answer (``SubchunkRoutes``): what updates spend on the wire besides content.
    func countSubchunkBytes(_ count: Int) {
        Counter(label: "kiosk_subchunk_bytes_sent_total", factory: factory).increment(by: count)
    }

    /// Counts one chunk read (`bytes` of a content file) and cut into subchunks: the work a subchunk answer costs when
    /// the chunk is not cached.
    func countChunkCut(bytes: Int) {
        Counter(label: "kiosk_subchunk_bytes_read_total", factory: factory).increment(by: bytes)
        Counter(label: "kiosk_subchunk_chunks_cut_total", factory: factory).increment()
        subchunkWork.withLockedValue { $0 = ($0.bytes + Int64(bytes), $0.chunks + 1) }
    }

    /// The bytes read and the chunks cut for subchunk answers since the server started (what tests use to prove
    /// that concurrent requests for the same chunks cut each one once).
    var subchunkWorkSoFar: (bytes: Int64, chunks: Int) { subchunkWork.withLockedValue { $0 } }

    /// All content bytes written to clients since the server started (what tests use to prove that a resumed
    /// download did not fetch bytes again).
    public var contentBytesSentSoFar: Int64 { contentBytesSentTotal.withLockedValue { $0 } }

    /// The counter of the answers the event loops give themselves for `route`, without the router (those answers
    /// are counted in `kiosk_http_requests_total` too): how an operator sees the fast path taken.
    func directAnswers(route: String) -> CoreMetrics.Counter {
        Counter(label: "kiosk_http_direct_answers_total", dimensions: [("route", route)], factory: factory)
    }

    /// Counts one answered request.
    func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        requestSeries(method: method, route: route, status: status).record(duration)
    }

    /// The handles of one request series (`kiosk_http_requests_total` by method, route and status, and the route's
    /// `kiosk_http_request_duration_seconds`): a caller answering many requests of one series (a connection of the
    /// event loop's) keeps them and records without looking them up again.
    func requestSeries(method: String, route: String, status: Int) -> RequestSeriesHandles {
        let key = RequestSeries(method: method, route: route, status: status)
        if let handles = requestHandles.withLockedValue({ $0[key] }) { return handles }
        let dimensions = [("method", method), ("route", route), ("status", String(status))]
        let made = RequestSeriesHandles(
            count: Counter(label: "kiosk_http_requests_total", dimensions: dimensions, factory: factory),
            duration: Timer(
                label: "kiosk_http_request_duration_seconds", dimensions: [("route", route)], factory: factory))
        requestHandles.withLockedValue { cache in
            if cache.count < Self.requestHandlesKept { cache[key] = made }
        }
        return made
    }

    /// The labels of one request series.
    private struct RequestSeries: Hashable {
        let method: String
        let route: String
        let status: Int
    }
    /// The request series' handles, made once each: making one looks it up in the registry by name and labels,
    /// too much work for every request.
    private let requestHandles = NIOLockedValueBox<[RequestSeries: RequestSeriesHandles]>([:])
    /// The most series kept (methods are the client's words: a client inventing methods must not grow the cache).
    private static let requestHandlesKept = 1024

    /// Counts one grant issued, or refused with an error code.
    func recordGrant(refusal code: String?) {
        if let code {
            Counter(label: "kiosk_grants_refused_total", dimensions: [("reason", code)], factory: factory).increment()
        } else {
            Counter(label: "kiosk_grants_issued_total", factory: factory).increment()
        }
    }

    /// Counts one grant refused because its purchase already serves the most installations allowed.
    func recordInstallationRefusal() {
        Counter(label: "kiosk_installation_limit_refusals_total", factory: factory).increment()
    }

    /// Counts one App Store Server Notification with its type and what was done with it.
    func recordNotification(type: String, outcome: String) {
        Counter(
            label: "kiosk_notifications_total", dimensions: [("type", type), ("outcome", outcome)], factory: factory
        ).increment()
    }

    /// Counts one content request refused because its token's transaction was refunded or revoked.
    func recordRevokedTokenRefusal() {
        Counter(label: "kiosk_revoked_token_refusals_total", factory: factory).increment()
    }

    /// Counts one call to the store with the status it answered (`transport_error` when there was no answer).
    func recordStoreCall(environment: String, status: String, duration: Duration) {
        let dimensions = [("environment", environment), ("status", status)]
        Counter(label: "kiosk_store_verifications_total", dimensions: dimensions, factory: factory).increment()
        Timer(
            label: "kiosk_store_verification_duration_seconds", dimensions: [("environment", environment)],
            factory: factory
        )
        .record(duration: duration)
    }

    /// Counts one App Store Server API call (`history`, `transaction`, `notification_history`, `consumption`) with
    /// its outcome: `ok`, `unavailable`, `misconfigured`, `refused` or `invalid` (an answer that did not verify).
    func recordAppStoreAPICall(_ call: String, outcome: String) {
        Counter(
            label: "kiosk_app_store_api_calls_total", dimensions: [("call", call), ("outcome", outcome)],
            factory: factory
        ).increment()
    }

    /// Counts one decision taken from locally verified data because the App Store Server API could not be reached
    /// (`transaction`: a grant without its lookup; `history`: a restore from the proof alone).
    func recordAppStoreAPIFallback(_ call: String) {
        Counter(label: "kiosk_app_store_api_fallbacks_total", dimensions: [("call", call)], factory: factory)
            .increment()
    }

    /// Counts notifications read from the notification history (`caught_up`: applied then; `known`: already
    /// applied when delivered).
    func recordNotificationCatchUp(outcome: String, count: Int) {
        Counter(label: "kiosk_notification_catch_up_total", dimensions: [("outcome", outcome)], factory: factory)
            .increment(by: count)
    }

    /// Publishes the receipt cache's counts (read from the verifier when metrics are scraped).
    func recordReceiptCache(_ statistics: ReceiptCacheStatistics) {
        for (name, value) in [
            ("hits", statistics.hits), ("misses", statistics.misses), ("coalesced", statistics.coalesced),
            ("evictions", statistics.evictions), ("entries", statistics.entries),
        ] {
            Gauge(label: "kiosk_receipt_cache_\(name)", factory: factory).record(value)
        }
    }

    /// Counts one connection closed because its client was too slow (`request_read`: sending a request; `send`:
    /// taking a response).
    func recordConnectionTimeout(reason: String) {
        Counter(label: "kiosk_connection_timeouts_total", dimensions: [("reason", reason)], factory: factory)
            .increment()
    }

    /// Counts one content answer handed to nginx (`--offload`): `full` for a whole file, `range` for one range.
    func recordOffload(location: String) {
        Counter(label: "kiosk_content_offloaded_total", dimensions: [("location", location)], factory: factory)
            .increment()
    }

    /// Counts one injected fault.
    func recordFault(_ kind: FaultKind) {
        Counter(label: "kiosk_faults_injected_total", dimensions: [("kind", kind.rawValue)], factory: factory)
            .increment()
    }

    /// The Prometheus text exposition of every metric.
    public func exposition() -> String {
        var buffer = [UInt8]()
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}

/// The handles of one request series (``ServerMetrics/requestSeries(method:route:status:)``).
struct RequestSeriesHandles {
    let count: CoreMetrics.Counter
    let duration: CoreMetrics.Timer

    /// Counts one request of the series that took `duration`.
    func record(_ duration: Duration) {
        count.increment()
        self.duration.record(duration: duration)
    }
}

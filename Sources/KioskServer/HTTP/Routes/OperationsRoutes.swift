import Hummingbird
import KioskCore

/// `GET /healthz` and `GET /metrics` (to loopback clients only unless `publicMetrics`: the counters tell who buys
/// what and how the store answers).
struct OperationsRoutes {
    let metrics: ServerMetrics
    let verifier: ReceiptVerifier
    let publicMetrics: Bool

    func register(on router: Router<KioskRequestContext>) {
        router.get("/healthz") { _, _ in try JSONIO.response(HealthResponse()) }
        router.get("/metrics") { _, context in
            guard publicMetrics || context.channel.remoteAddress?.ipAddress.map(LoopbackAddress.contains) == true
            else {
                throw APIError.notFound("/metrics is served to loopback clients only (see --public-metrics).")
            }
            metrics.recordReceiptCache(await verifier.cacheStatistics)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
    }
}

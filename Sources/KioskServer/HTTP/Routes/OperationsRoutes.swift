import Hummingbird
import KioskCore

/// `GET /healthz` and `GET /metrics`.
struct OperationsRoutes {
    let metrics: ServerMetrics
    let verifier: ReceiptVerifier

    func register(on router: Router<KioskRequestContext>) {
        router.get("/healthz") { _, _ in try JSONIO.response(HealthResponse()) }
        router.get("/metrics") { _, _ in
            metrics.recordReceiptCache(await verifier.cacheStatistics)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
    }
}

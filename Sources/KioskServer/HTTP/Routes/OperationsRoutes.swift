import Hummingbird
import KioskCore

/// `GET /healthz` (alive), `GET /readyz` (able to take traffic: ``Readiness``) and `GET /metrics` (to loopback
/// clients only unless `publicMetrics`: the counters tell who buys what and how the store answers).
struct OperationsRoutes {
    let metrics: ServerMetrics
    let verifier: ReceiptVerifier
    let readiness: Readiness
    let publicMetrics: Bool

    func register(on router: Router<KioskRequestContext>) {
        router.get("/healthz") { _, _ in try JSONIO.response(HealthResponse()) }
        router.get("/readyz") { _, context in
            let checks: [String: String]
            do throws(Readiness.Failure) {
                checks = try await readiness.check()
            } catch {
                context.logger.warning(
                    "not ready", metadata: ["check": "\(error.check)", "problem": "\(error.problem)"])
                throw APIError(.notReady, "Not ready: the \(error.check) check found \(error.problem).")
            }
            return try JSONIO.response(ReadinessResponse(checks: checks))
        }
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

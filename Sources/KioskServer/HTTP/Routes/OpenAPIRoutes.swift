import Hummingbird

/// `GET`/`HEAD /openapi.yaml`: the server's contract (``OpenAPIDocument``), compiled into the server.
struct OpenAPIRoutes {
    /// Adds the two routes to `router`.
    func register(on router: Router<KioskRequestContext>) {
        router.get("/openapi.yaml") { _, _ in OpenAPIDocument.answer.response }
        router.head("/openapi.yaml") { _, _ in OpenAPIDocument.headAnswer.response }
    }
}

import Hummingbird

/// `GET`/`HEAD /v1/products` and `GET`/`HEAD /v1/products/{id}`: the answers of ``CatalogAnswers``. Most of these
/// requests never reach the router: ``DirectAnswers`` answers them on the event loop; what it leaves (errors, a
/// request with a body, one behind another on its connection) comes here.
struct CatalogRoutes {
    let answers: CatalogAnswers

    func register(on router: Router<KioskRequestContext>) {
        router.get("/v1/products") { request, _ in try self.products(request, isHead: false) }
        router.head("/v1/products") { request, _ in try self.products(request, isHead: true) }
        router.get("/v1/products/{id}") { request, context in
            try self.product(request, id: context.parameters.get("id"), isHead: false)
        }
        router.head("/v1/products/{id}") { request, context in
            try self.product(request, id: context.parameters.get("id"), isHead: true)
        }
    }

    private func products(_ request: Request, isHead: Bool) throws -> Response {
        let representation = try answers.products(query: request.uri.queryParameters)
        return Self.answer(representation, to: request, isHead: isHead)
    }

    private func product(_ request: Request, id: String?, isHead: Bool) throws -> Response {
        let representation = try answers.product(id: id)
        return Self.answer(representation, to: request, isHead: isHead)
    }

    private static func answer(_ representation: CatalogRepresentation, to request: Request, isHead: Bool) -> Response {
        CatalogAnswers.answer(
            with: representation, acceptEncoding: request.headers[.acceptEncoding],
            ifNoneMatch: request.headers[.ifNoneMatch], isHead: isHead
        ).response
    }
}

import HTTPTypes
import Hummingbird
import KioskCore

/// `GET /v1/subchunks/<product_id>/<content_version>/<path>?chunks=<index>,…`: chunks of a file cut finer
/// (``GrantSubchunks``), as JSON. Admitted exactly as content (the grant's token, ``ContentAccess``), with the same
/// path rules; the chunks are cut by ``SubchunkService``. No faults are injected here.
struct SubchunkRoutes {
    /// Checks the tokens.
    let access: ContentAccess
    /// Opens the files and cuts their chunks.
    let subchunks: SubchunkService
    /// Counts the bytes answered.
    let metrics: ServerMetrics

    func register(on router: Router<KioskRequestContext>) {
        router.get("/v1/subchunks/**") { request, context in
            try await self.serve(request, context: context)
        }
    }

    func serve(_ request: Request, context: KioskRequestContext) async throws -> Response {
        let claims = try access.claims(for: request.bearerToken)
        guard let path = ContentPath(rawPath: request.uri.path, under: GrantURLs.subchunksPrefix) else {
            throw APIError.badRequest("The subchunk path is not valid.")
        }
        let list = try await subchunks.subchunks(
            of: path, chunks: request.uri.queryParameters.getAll("chunks"), for: claims)
        // One line per subchunk request at `debug`, as for content: the path and the number of chunks, never the
        // token.
        context.logger.debug(
            "subchunk request", metadata: ["path": "\(request.uri.path)", "chunks": "\(list.chunks.count)"])
        let response = try JSONIO.response(list, headers: [.cacheControl: "private"])
        if let length = response.body.contentLength { metrics.countSubchunkBytes(length) }
        return response
    }
}

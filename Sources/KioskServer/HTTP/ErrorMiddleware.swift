import Hummingbird
import KioskCore
import Logging

/// Turns every error into the JSON envelope of API.md and counts every answer in the metrics.
///
/// Every ``APIResponseError`` (the services' domain refusals and the HTTP layer's ``APIError``) answers as it says;
/// the framework's own errors (unknown route, bad method) are translated; anything else is logged and answered as a
/// 500 that reveals nothing internal. An answer to `HEAD` leaves without a body (``headAnswer(_:)``).
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let started = ContinuousClock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as any APIResponseError {
            response = JSONIO.errorResponse(error)
        } catch let error as HTTPResponseError {
            response = JSONIO.errorResponse(Self.translate(error.status, request: request))
        } catch {
            context.logger.error("unexpected error", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            response = JSONIO.errorResponse(APIError(.internalError, "The server met an unexpected error."))
        }
        metrics.recordRequest(
            method: request.method.rawValue, route: Self.routeLabel(context.endpointPath), status: response.status.code,
            duration: ContinuousClock.now - started)
        return request.method == .head ? Self.headAnswer(response) : response
    }

    /// An answer to `HEAD`: the headers `GET` would get, with the body's `Content-Length`, and no body (RFC 9110
    /// §9.3.2). The routes answer `HEAD` without a body themselves; an error's envelope is dropped here, since the
    /// response encoder does not drop it (``KioskHTTP1Channel``).
    static func headAnswer(_ response: Response) -> Response {
        guard response.body.contentLength != 0 else { return response }
        var headers = response.headers
        if headers[.contentLength] == nil, let length = response.body.contentLength {
            headers[.contentLength] = String(length)
        }
        return Response(status: response.status, headers: headers, body: ResponseBody())
    }

    /// The `route` label of the request metrics: the matched route's pattern, or `unmatched` when no route matched
    /// (Hummingbird then names the endpoint `NotFound`; every Kiosk route starts with `/`).
    static func routeLabel(_ endpointPath: String?) -> String {
        guard let endpointPath, endpointPath.hasPrefix("/") else { return "unmatched" }
        return endpointPath
    }

    private static func translate(_ status: HTTPResponse.Status, request: Request) -> APIError {
        switch status.code {
        case 404: APIError(.notFound, "There is nothing at \(request.method.rawValue) \(request.uri.path).")
        case 405: APIError(.methodNotAllowed, "\(request.method.rawValue) is not allowed on \(request.uri.path).")
        case 413: APIError(.payloadTooLarge, "The request body is too large.")
        case 400..<500: APIError(.badRequest, "The request is not valid (\(status.code)).")
        default: APIError(.internalError, "The server met an unexpected error.")
        }
    }
}

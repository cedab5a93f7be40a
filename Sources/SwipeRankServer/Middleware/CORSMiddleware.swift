import HTTPTypes
import Hummingbird

/// Cross-origin requests from browser apps served elsewhere (`serve --cors-origins`): a
/// preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) is answered 204 with
/// what may be sent, and every answer to an allowed origin names it. Tokens travel in the
/// `Authorization` header, never cookies, so no credentials mode is offered. Off (no CORS
/// header at all) when no origin is configured.
struct CORSMiddleware: RouterMiddleware {
    typealias Context = SwipeRankRequestContext
    /// Allowed origins (`https://app.example.com`), or `["*"]` for any.
    let origins: [String]

    static let allowMethods = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
    static let allowHeaders = "Authorization, Content-Type, Accept, Accept-Encoding, X-Request-ID, If-None-Match"
    static let exposeHeaders = "X-Request-ID, X-API-Version, X-RateLimit-Limit, X-RateLimit-Remaining, Retry-After, ETag, Location, Idempotent-Replayed"

    /// The `Access-Control-Allow-Origin` value for a request's origin, or nil when it is not allowed.
    func allowed(_ origin: String?) -> String? {
        guard let origin, origin != "null" else { return nil }
        if origins.contains("*") { return "*" }
        return origins.contains(origin) ? origin : nil
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !origins.isEmpty else { return try await next(request, context) }
        let origin = request.headers[.origin]
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers: HTTPFields = [.vary: "Origin"]
            if let value = allowed(origin) {
                headers[.accessControlAllowOrigin] = value
                headers[.accessControlAllowMethods] = Self.allowMethods
                headers[.accessControlAllowHeaders] = Self.allowHeaders
                headers[.accessControlMaxAge] = "600"
            }
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        if let value = allowed(origin) {
            response.headers[.accessControlAllowOrigin] = value
            response.headers[.accessControlExposeHeaders] = Self.exposeHeaders
            if value != "*" { response.headers[.vary] = "Origin" }
        }
        return response
    }
}

import HTTPTypes
import Hummingbird

/// Cross-origin requests from browser apps served elsewhere (`serve --cors-origins`): a
/// preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) is answered 204 with
/// what may be sent, and every answer to an allowed origin names it. Tokens travel in the
/// `Authorization` header, never cookies, so no credentials mode is offered. Off (no CORS
/// header at all) when no origin is configured. A step of `FrontDoorMiddleware`, which answers a
/// preflight before the request's other steps.
struct CORSMiddleware: Sendable {
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

    /// The answer to a preflight (204, with what may be sent when the origin is allowed), or nil
    /// when the request is not one (or CORS is off).
    func preflight(_ request: Request) -> Response? {
        guard !origins.isEmpty, request.method == .options, request.headers[.accessControlRequestMethod] != nil else { return nil }
        var headers: HTTPFields = [.vary: "Origin"]
        if let value = allowed(request.headers[.origin]) {
            headers[.accessControlAllowOrigin] = value
            headers[.accessControlAllowMethods] = Self.allowMethods
            headers[.accessControlAllowHeaders] = Self.allowHeaders
            headers[.accessControlMaxAge] = "600"
        }
        return Response(status: .noContent, headers: headers)
    }

    /// Names an allowed origin on the answer to any other request.
    func decorate(_ response: inout Response, for request: Request) {
        guard !origins.isEmpty, let value = allowed(request.headers[.origin]) else { return }
        response.headers[.accessControlAllowOrigin] = value
        response.headers[.accessControlExposeHeaders] = Self.exposeHeaders
        if value != "*" { response.headers[.vary] = "Origin" }
    }
}

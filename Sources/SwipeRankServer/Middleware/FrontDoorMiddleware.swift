import Hummingbird

// Why two middlewares of several steps each, not a middleware per step: under `serve --executor
// nio` every job runs isolated to its event loop, so each call into (and return from) a
// nonisolated async function re-queues the request's task on the loop. A Hummingbird middleware
// is three such functions deep (its responder, the responder's closure, `handle`). Counted with a
// gdb breakpoint on `swift_task_switch` (20 keep-alive deck requests), the six middlewares a
// `/student` request passed cost it about 40 task switches. The steps are plain functions here
// (`nonisolated(nonsending)` where one may suspend), called in the order the middlewares ran.

/// Every request's steps, outermost first: CORS (a preflight is answered here, before the
/// others), the request's id, metrics and log line (`RequestMiddleware`), the error envelope for
/// whatever the route threw (`ErrorMiddleware`), and gzip on the way out (`CompressionMiddleware`,
/// on every answer, the preflight's too).
struct FrontDoorMiddleware: RouterMiddleware {
    typealias Context = SwipeRankRequestContext
    let compression: CompressionMiddleware
    let cors: CORSMiddleware
    let request: RequestMiddleware
    let errors: ErrorMiddleware

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        if let preflight = cors.preflight(request) {
            response = preflight
        } else {
            var context = context
            let start = self.request.begin(request, context: &context)
            do {
                response = try await next(request, context)
            } catch {
                response = errors.response(for: error, request: request, context: context)
            }
            self.request.finish(&response, for: request, context: context, start: start)
            cors.decorate(&response, for: request)
        }
        try await compression.compress(&response, for: request)
        return response
    }
}

/// The steps of every student route: the token's student into the context
/// (`StudentAuthMiddleware`), then a token from the student's rate limit (`RateLimitMiddleware`),
/// whose headers go on the answer or on the error thrown.
struct StudentGateMiddleware: RouterMiddleware {
    typealias Context = SwipeRankRequestContext
    let auth: StudentAuthMiddleware
    let rateLimit: RateLimitMiddleware

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        try await auth.authenticate(request, context: &context)
        let fields = try rateLimit.admit(context)
        do {
            var response = try await next(request, context)
            rateLimit.decorate(&response, with: fields)
            return response
        } catch let error as APIError {
            throw error.adding(fields)  // errors count against the limit too, and say so
        }
    }
}

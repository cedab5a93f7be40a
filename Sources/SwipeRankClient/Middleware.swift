import Foundation
import HTTPTypes
import OpenAPIRuntime

/// An error answer of the service: its HTTP status and the `{"error": {"code", "message",
/// "details"}}` envelope every error carries, so callers switch on `code` (stable) rather than
/// on generated per-operation response cases.
public struct SwipeRankAPIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status (400, 404, 409, 429, …).
    public var status: Int
    /// The stable error code (`VALIDATION_ERROR`, `NOT_FOUND`, `RATE_LIMITED`, …).
    public var code: String
    /// A human-readable explanation (English; not meant for matching).
    public var message: String
    /// What the error names: a `field`, a `resource`, a `reason`, as the service documents them.
    public var details: OpenAPIObjectContainer
    /// `Retry-After` in seconds, when the answer had one (429, 503).
    public var retryAfterSeconds: Int?

    /// Creates an error value (the client builds these from responses; tests may build their own).
    public init(status: Int, code: String, message: String, details: OpenAPIObjectContainer = .init(), retryAfterSeconds: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// A detail as text (`details["field"]`), when it is a string.
    public func detail(_ key: String) -> String? { details.value[key] as? String }

    /// `status code: message`.
    public var description: String { "\(status) \(code): \(message)" }
}

/// Errors of the client itself, not answers of the service.
public enum SwipeRankClientError: Error, Sendable, Hashable {
    /// The service answered a status the description does not list for the operation, without
    /// an error envelope.
    case unexpectedStatus(Int)
    /// The queue file exists but is not a queue this client wrote.
    case unreadableQueue(String)
}

/// Adds `Authorization: Bearer` from the token provider to each request (each attempt, so a
/// refreshed token is used on a retry). A nil token sends none (public routes, guest sign-in).
struct BearerMiddleware: ClientMiddleware {
    let token: @Sendable () async throws -> String?

    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if request.headerFields[.authorization] == nil, let token = try await token() {
            request.headerFields[.authorization] = "Bearer \(token)"
        }
        return try await next(request, body, baseURL)
    }
}

/// How the client retries a 429 (rate limited) or 503 (unavailable) answer: the service says
/// when to come back (`Retry-After`), and otherwise the waits double from `baseDelay`. Bounded, so
/// a client never loops forever against a service that keeps refusing.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included (1: never retry).
    public var maxAttempts: Int
    /// The first wait when the answer has no `Retry-After`; each further wait doubles.
    public var baseDelay: Duration
    /// The longest wait accepted: a longer `Retry-After` (or backoff) is not waited out; the
    /// error is returned to the caller instead (an app would rather show "try later").
    public var maxDelay: Duration
    /// How to wait. Injectable so tests assert the waits without sleeping.
    public var sleep: @Sendable (Duration) async throws -> Void

    /// - Parameters:
    ///   - maxAttempts: Attempts in all (default 4).
    ///   - baseDelay: The first backoff without `Retry-After` (default 0.5 s).
    ///   - maxDelay: The longest wait (default 120 s).
    ///   - sleep: How to wait (default `Task.sleep`).
    public init(maxAttempts: Int = 4, baseDelay: Duration = .milliseconds(500), maxDelay: Duration = .seconds(120),
                sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.sleep = sleep
    }

    /// The waits this policy would make for a service that keeps refusing with the same
    /// `Retry-After` (nil: none), in order; empty when the first is already too long.
    public func delays(retryAfterSeconds: Int?) -> [Duration] {
        var waits: [Duration] = []
        var attempt = 1
        while let wait = delay(afterAttempt: attempt, retryAfterSeconds: retryAfterSeconds) {
            waits.append(wait)
            attempt += 1
        }
        return waits
    }

    /// The wait before attempt `attempt + 1` after a refusal, or nil to give up.
    func delay(afterAttempt attempt: Int, retryAfterSeconds: Int?) -> Duration? {
        guard attempt < maxAttempts else { return nil }
        let wait = retryAfterSeconds.map { Duration.seconds(max(0, $0)) } ?? baseDelay * (1 << min(attempt - 1, 20))
        return wait <= maxDelay ? wait : nil
    }
}

/// Retries 429 and 503 answers per `RetryPolicy`. Both mean the request was not processed, so
/// a retry is safe (and swipes are idempotent by swipe id besides). The body is buffered once so
/// every attempt can send it.
struct RetryMiddleware: ClientMiddleware {
    let policy: RetryPolicy

    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        let bytes: Data? = if let body { try await Data(collecting: body, upTo: 64 << 20) } else { nil }
        var attempt = 1
        while true {
            let (response, responseBody) = try await next(request, bytes.map { HTTPBody($0) }, baseURL)
            guard response.status.code == 429 || response.status.code == 503 else { return (response, responseBody) }
            let retryAfter = response.headerFields[.retryAfter].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard let wait = policy.delay(afterAttempt: attempt, retryAfterSeconds: retryAfter) else {
                return (response, responseBody)
            }
            // Drain the refused answer before the next attempt.
            if let responseBody { _ = try? await Data(collecting: responseBody, upTo: 1 << 20) }
            try await policy.sleep(wait)
            attempt += 1
        }
    }
}

/// Turns every error answer (status ≥ 400 with the JSON envelope) into `SwipeRankAPIError`, so
/// all operations fail the same typed way with the service's code, message and details.
struct ErrorEnvelopeMiddleware: ClientMiddleware {
    private struct Envelope: Decodable {
        struct Body: Decodable {
            var code: String
            var message: String
            var details: OpenAPIObjectContainer?
        }
        var error: Body
    }

    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        guard response.status.code >= 400 else { return (response, responseBody) }
        let data = if let responseBody { try await Data(collecting: responseBody, upTo: 1 << 20) } else { Data() }
        let retryAfter = response.headerFields[.retryAfter].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        if let envelope = try? JSONDecoder().decode(Envelope.self, from: data) {
            throw SwipeRankAPIError(status: response.status.code, code: envelope.error.code, message: envelope.error.message,
                                    details: envelope.error.details ?? .init(), retryAfterSeconds: retryAfter)
        }
        // Not the envelope (a proxy's page, say): the generated code reports it as undocumented.
        return (response, HTTPBody(data))
    }
}

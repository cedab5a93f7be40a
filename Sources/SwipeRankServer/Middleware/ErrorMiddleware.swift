import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Synchronization

/// The outermost error handler: every failure becomes the envelope
/// `{"error": {"code", "message", "details"}}` — unknown routes (404) and wrong methods (405
/// with `Allow`), body limits (413), store failures (500, logged with the request id, nothing
/// internal sent). A step of `FrontDoorMiddleware`, which hands it whatever the route threw.
struct ErrorMiddleware: Sendable {
    typealias Context = SwipeRankRequestContext
    let routes: RouteTable

    /// The envelope answering an error a route threw.
    func response(for error: any Error, request: Request, context: Context) -> Response {
        switch error {
        case let error as APIError:
            return error.response(requestID: context.requestID)
        case let error as HTTPError:
            return map(error, request: request).response(requestID: context.requestID)
        case let error as any HTTPResponseError:
            return APIError(error.status, code: Self.code(for: error.status), message: error.status.reasonPhrase)
                .response(requestID: context.requestID)
        default:
            context.logger.error("unhandled error", metadata: ["error": "\(error)", "request_id": "\(context.requestID)"])
            return APIError.server.response(requestID: context.requestID)
        }
    }

    private func map(_ error: HTTPError, request: Request) -> APIError {
        switch error.status {
        case .notFound:
            let allowed = routes.methods(for: request.uri.path)
            if !allowed.isEmpty, !allowed.contains(request.method) {
                let allow = allowed.map(\.rawValue).sorted().joined(separator: ", ")
                return APIError(.methodNotAllowed, code: "METHOD_NOT_ALLOWED",
                                message: "\(request.method.rawValue) is not allowed on \(request.uri.path); allowed: \(allow)",
                                details: ["allowed": .array(allowed.map { .string($0.rawValue) }.sorted { "\($0)" < "\($1)" })],
                                headers: [.allow: allow])
            }
            if allowed.isEmpty, error.body == nil {
                return APIError.notFound("no route \(request.method.rawValue) \(request.uri.path)", details: ["resource": .string("route")])
            }
            return APIError.notFound(error.body ?? "not found")
        case .contentTooLarge:
            return APIError(.contentTooLarge, code: "PAYLOAD_TOO_LARGE", message: "the request body is larger than the limit")
        case .badRequest:
            return APIError.validation(error.body ?? "bad request")
        default:
            return APIError(error.status, code: Self.code(for: error.status), message: error.body ?? error.status.reasonPhrase)
        }
    }

    static func code(for status: HTTPResponse.Status) -> String {
        switch status.code {
        case 400: "VALIDATION_ERROR"
        case 401: "AUTH_REQUIRED"
        case 403: "ACCESS_DENIED"
        case 404: "NOT_FOUND"
        case 405: "METHOD_NOT_ALLOWED"
        case 409: "CONFLICT"
        case 413: "PAYLOAD_TOO_LARGE"
        case 415: "UNSUPPORTED_MEDIA_TYPE"
        case 429: "RATE_LIMITED"
        case 500...: "SERVER_ERROR"
        default: "HTTP_\(status.code)"
        }
    }
}

/// The routes the service registers, by method and path pattern (`:name` matches one
/// segment): tells a wrong method (405) from an unknown path (404).
final class RouteTable: Sendable {
    private let routes = Mutex<[(method: HTTPRequest.Method, segments: [String])]>([])

    func add(_ method: HTTPRequest.Method, _ path: String) {
        routes.withLock { $0.append((method, path.split(separator: "/").map(String.init))) }
    }

    /// The methods of the routes a path reaches. Like the router's trie, a literal segment
    /// wins over a parameter (`/groups/join` is not `/groups/:id`), so only the most literal
    /// matches count.
    func methods(for path: String) -> Set<HTTPRequest.Method> {
        let segments = path.split(separator: "/").map(String.init)
        let matches = routes.withLock { $0 }.filter { route in
            route.segments.count == segments.count && zip(route.segments, segments).allSatisfy { $0.hasPrefix(":") || $0 == $1 }
        }.map { (method: $0.method, literal: $0.segments.map { !$0.hasPrefix(":") }) }
        // The most literal shape, comparing segments left to right (literal before parameter).
        func moreLiteral(_ a: [Bool], _ b: [Bool]) -> Bool {
            guard let i = a.indices.first(where: { a[$0] != b[$0] }) else { return false }
            return a[i]
        }
        guard let best = matches.map(\.literal).reduce(nil, { (best: [Bool]?, m: [Bool]) in
            best.map { moreLiteral(m, $0) ? m : $0 } ?? m
        }) else { return [] }
        return Set(matches.filter { $0.literal == best }.map(\.method))
    }
}

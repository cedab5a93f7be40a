import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// The outermost middleware: gives every request an id (`X-Request-ID`, the client's when
/// well-formed), stamps `X-Request-ID` and `X-API-Version` on every response, records latency
/// by route and status in Prometheus, and logs one structured line per request.
struct RequestMiddleware: RouterMiddleware {
    typealias Context = SwipeRankRequestContext
    let metrics: ServerMetrics

    static let apiVersion = "1"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let start = ContinuousClock.now
        context.requestID = Self.requestID(from: request.headers[.xRequestID])
        context.logger[metadataKey: "request_id"] = .string(context.requestID)
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            // The error middleware sits inside this one; this is a last resort.
            response = APIError.server.response(requestID: context.requestID)
        }
        response.headers[.xRequestID] = context.requestID
        response.headers[.xAPIVersion] = Self.apiVersion
        let elapsed = ContinuousClock.now - start
        let route = context.endpointPath ?? "unmatched"
        metrics.record(method: request.method.rawValue, route: route, status: Int(response.status.code), duration: elapsed)
        context.logger.info("request", metadata: [
            "method": .string(request.method.rawValue), "path": .string(request.uri.path), "route": .string(route),
            "status": .stringConvertible(response.status.code),
            "ms": .string(String(format: "%.3f", Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)),
        ])
        return response
    }

    /// The client's id when it is 1…64 of `A–Z a–z 0–9 - _ .`, else a new UUID.
    static func requestID(from header: String?) -> String {
        if let header, !header.isEmpty, header.utf8.count <= 64,
           header.utf8.allSatisfy({ b in
               (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x5F || b == 0x2E
           }) {
            return header
        }
        return UUID().uuidString.lowercased()
    }
}

extension HTTPField.Name {
    static let xRequestID = Self("X-Request-ID")!
    static let xAPIVersion = Self("X-API-Version")!
    static let xRateLimitLimit = Self("X-RateLimit-Limit")!
    static let xRateLimitRemaining = Self("X-RateLimit-Remaining")!
}

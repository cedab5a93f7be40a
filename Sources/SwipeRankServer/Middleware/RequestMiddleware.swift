import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Synchronization

/// Gives every request an id (`X-Request-ID`, the client's when well-formed), stamps
/// `X-Request-ID` and `X-API-Version` on every response, records latency by route and status in
/// Prometheus, and logs one structured line per request. A step of `FrontDoorMiddleware`:
/// `begin` before the route, `finish` on its answer (or on the error envelope it threw).
struct RequestMiddleware: Sendable {
    typealias Context = SwipeRankRequestContext
    let metrics: ServerMetrics

    static let apiVersion = "1"

    /// Starts a request: its id goes into the context.
    ///
    /// - Returns: When it started.
    func begin(_ request: Request, context: inout Context) -> ContinuousClock.Instant {
        // Not set as logger metadata: the stream handler renders its metadata again every time
        // it changes (2% of the CPU under load, at any log level); the lines that need the id
        // carry it.
        context.requestID = Self.requestID(from: request.headers.value(.xRequestID))
        return ContinuousClock.now
    }

    /// Ends a request: the id and API version on the response, its latency recorded, one log line.
    func finish(_ response: inout Response, for request: Request, context: Context, start: ContinuousClock.Instant) {
        response.headers[.xRequestID] = context.requestID
        response.headers[.xAPIVersion] = Self.apiVersion
        let elapsed = ContinuousClock.now - start
        let route = context.endpointPath ?? "unmatched"
        metrics.record(method: request.method.rawValue, route: route, status: Int(response.status.code), duration: elapsed)
        context.logger.info("request", metadata: [
            "request_id": .string(context.requestID), "method": .string(request.method.rawValue), "path": .string(request.uri.path), "route": .string(route),
            "status": .stringConvertible(response.status.code),
            "ms": .string(String(format: "%.3f", Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)),
        ])
    }

    /// The client's id when it is 1…64 of `A–Z a–z 0–9 - _ .`, else a new one (`RequestIDs`).
    static func requestID(from header: String?) -> String {
        if let header, !header.isEmpty, header.utf8.count <= 64,
           header.utf8.allSatisfy({ b in
               (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x5F || b == 0x2E
           }) {
            return header
        }
        return RequestIDs.next()
    }
}

/// New request ids: UUID-shaped (version 4 layout, lowercase), made of 62 random bits drawn once
/// per process and a counter, so unique within a process and, with overwhelming likelihood,
/// across processes — without Foundation's `UUID()`, which opens and reads `/dev/urandom` for
/// every request (0.4% of the server's CPU under load).
enum RequestIDs {
    private static let prefix = UInt64.random(in: .min ... .max)
    private static let counter = Atomic<UInt64>(0)

    /// The next id.
    static func next() -> String {
        let n = counter.add(1, ordering: .relaxed).newValue
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: prefix >> (56 - 8 * i))
            bytes[8 + i] = UInt8(truncatingIfNeeded: n >> (56 - 8 * i))
        }
        bytes[6] = 0x40 | (bytes[6] & 0x0F)   // version 4
        bytes[8] = 0x80 | (bytes[8] & 0x3F)   // RFC 4122 variant
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (i, byte) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { text.append(UInt8(ascii: "-")) }
            Hex.append(byte, to: &text)
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension HTTPField.Name {
    static let xRequestID = Self("X-Request-ID")!
    static let xAPIVersion = Self("X-API-Version")!
    static let xRateLimitLimit = Self("X-RateLimit-Limit")!
    static let xRateLimitRemaining = Self("X-RateLimit-Remaining")!
}

import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// A token bucket per key: `capacity` requests at once, refilled continuously at
/// `capacity / period`. Buckets that have refilled completely are forgotten (a full bucket
/// and no bucket behave the same), so memory follows the active keys.
final class TokenBuckets: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    private let buckets = Mutex<[String: Bucket]>([:])
    let capacity: Double
    let refillPerSecond: Double
    private let now: @Sendable () -> Double

    init(capacity: Int, period: Double, now: @escaping @Sendable () -> Double) {
        precondition(capacity >= 1 && period > 0, "a rate limit needs a capacity ≥ 1 and a positive period")
        self.capacity = Double(capacity)
        self.refillPerSecond = Double(capacity) / period
        self.now = now
    }

    /// The service's clock (milliseconds since 1970, `ServiceOptions.clock`) in
    /// seconds: buckets refill on the same time as everything else the service stamps, so a
    /// test's fixed clock makes a limit deterministic however slowly the requests run.
    static func seconds(_ clock: @escaping @Sendable () -> Int64) -> @Sendable () -> Double {
        { Double(clock()) / 1_000 }
    }

    /// Takes `cost` tokens (all or none); returns the tokens left, or the seconds until that
    /// many are available (a cost above the capacity is capped at it, so it can always pass).
    func take(_ key: String, cost: Int = 1) -> Result<Int, RetryAfter> {
        let t = now()
        let cost = min(Double(max(1, cost)), capacity)
        return buckets.withLock { all in
            var b = all[key] ?? Bucket(tokens: capacity, updated: t)
            b.tokens = min(capacity, b.tokens + max(0, t - b.updated) * refillPerSecond)
            b.updated = t
            if all.count > 100_000 { all = all.filter { $0.value.tokens + (t - $0.value.updated) * refillPerSecond < capacity } }
            guard b.tokens >= cost else {
                all[key] = b
                return .failure(RetryAfter(seconds: max(1, Int(((cost - b.tokens) / refillPerSecond).rounded(.up)))))
            }
            b.tokens -= cost
            all[key] = b
            return .success(Int(b.tokens))
        }
    }

    struct RetryAfter: Error {
        var seconds: Int
    }
}

/// Limits each student's requests (after auth): 429 `RATE_LIMITED` with `Retry-After`, and
/// `X-RateLimit-Limit` / `X-RateLimit-Remaining` on every response. A step of
/// `StudentGateMiddleware`.
struct RateLimitMiddleware: Sendable {
    typealias Context = SwipeRankRequestContext
    let buckets: TokenBuckets

    /// Takes a token for the request's student.
    ///
    /// - Returns: The limit's headers for the answer (`decorate`, or `APIError.adding` on an error,
    ///   which counts against the limit too and says so).
    /// - Throws: `APIError` 429 when the student has none left.
    func admit(_ context: Context) throws(APIError) -> HTTPFields {
        switch buckets.take(context.studentID ?? "anonymous") {
        case let .failure(retry):
            throw APIError.rateLimited(retry, limit: Int(buckets.capacity), what: "requests")
        case let .success(remaining):
            return [.xRateLimitLimit: String(Int(buckets.capacity)), .xRateLimitRemaining: String(remaining)]
        }
    }

    /// Puts the limit's headers on an answer; a route that charged more (a sync batch) has set its
    /// own, later count.
    func decorate(_ response: inout Response, with fields: HTTPFields) {
        for field in fields where response.headers[field.name] == nil { response.headers.append(field) }
    }
}

extension APIError {
    /// 429 `RATE_LIMITED` with `Retry-After` and the limit's headers.
    ///
    /// - Parameters:
    ///   - retry: When a token is back.
    ///   - limit: The bucket's capacity.
    ///   - what: What was limited ("requests", "joins").
    ///   - subject: Whose limit ("this student", "this address").
    static func rateLimited(_ retry: TokenBuckets.RetryAfter, limit: Int, what: String, subject: String = "this student") -> APIError {
        APIError(.tooManyRequests, code: "RATE_LIMITED",
                 message: "too many \(what) for \(subject); retry in \(retry.seconds) s",
                 details: ["retry_after_seconds": .number(Double(retry.seconds)), "limit": .number(Double(limit))],
                 headers: [.retryAfter: String(retry.seconds), .xRateLimitLimit: String(limit), .xRateLimitRemaining: "0"])
    }
}

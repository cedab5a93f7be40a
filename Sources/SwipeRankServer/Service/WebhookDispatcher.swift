import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import SwipeRankStore

/// Where and how the app's backend is told of group matches.
public struct WebhookConfiguration: Sendable {
    /// The receiver (`https://api.example.com/swiperank/hooks`).
    public var url: String
    /// The HMAC-SHA256 key of `X-SwipeRank-Signature` (≥ 32 bytes).
    public var secret: String
    /// Attempts before a delivery is marked failed.
    public var maxAttempts = 8
    /// The wait after the first failure; doubled after each (capped at `maxBackoff`).
    public var backoff: Duration = .seconds(2)
    /// The longest wait between two attempts.
    public var maxBackoff: Duration = .seconds(3_600)
    /// How long the receiver has to answer.
    public var timeout: Duration = .seconds(10)
    /// How often the outbox is checked for due deliveries.
    public var pollInterval: Duration = .milliseconds(250)

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - url: The receiver.
    ///   - secret: The signing key.
    public init(url: String, secret: String) {
        self.url = url
        self.secret = secret
    }

    /// The signature header's value for `body` sent at `timestamp` (Unix seconds):
    /// `t=<timestamp>,v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>` — the time is signed
    /// too, so a receiver can refuse a replayed old delivery.
    ///
    /// - Parameters:
    ///   - body: The exact bytes sent.
    ///   - timestamp: Unix seconds.
    /// - Returns: The header value.
    public func signature(body: Data, timestamp: Int64) -> String {
        var message = Data("\(timestamp).".utf8)
        message.append(body)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))
        return "t=\(timestamp),v1=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    /// The wait before attempt `attempts + 1` after `attempts` failures.
    func delay(afterAttempts attempts: Int) -> Duration {
        let factor = 1 << min(max(0, attempts - 1), 20)
        return min(backoff * factor, maxBackoff)
    }
}

/// Sends the outbox's due deliveries (at least once; one POST each, signed), records each
/// attempt, retries with exponential backoff, and marks a delivery failed after
/// `maxAttempts`. Several instances on one database share the work through the store's leases.
struct WebhookDispatcher: Service {
    /// What a send returns: the receiver's HTTP status.
    typealias Send = @Sendable (_ url: String, _ headers: [(String, String)], _ body: Data, _ timeout: Duration) async throws -> Int

    let store: any WebhookOutbox
    let configuration: WebhookConfiguration
    let logger: Logger
    let metrics: ServerMetrics
    /// Milliseconds since 1970.
    var clock: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1_000) }
    var send: Send = WebhookDispatcher.post

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: configuration.pollInterval)
                do {
                    _ = try await pass(now: clock())
                } catch {
                    logger.error("webhook outbox pass failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// One pass: claims what is due at `now` and attempts each. Returns the attempts made.
    @discardableResult
    func pass(now: Int64) async throws -> Int {
        let lease = now + Self.milliseconds(configuration.timeout) * 3 + 5_000
        let due = try await store.claimWebhookDeliveries(now: now, leaseUntil: lease, limit: 16)
        for delivery in due { try await attempt(delivery, now: now) }
        return due.count
    }

    private func attempt(_ delivery: WebhookDelivery, now: Int64) async throws {
        var d = delivery
        d.attempts += 1
        let headers = [("Content-Type", "application/json"), ("User-Agent", "SwipeRank-Webhook/1"),
                       ("X-SwipeRank-Event", d.event), ("X-SwipeRank-Delivery", d.id),
                       ("X-SwipeRank-Signature", configuration.signature(body: d.payload, timestamp: now / 1_000))]
        do {
            let status = try await send(configuration.url, headers, d.payload, configuration.timeout)
            d.lastStatus = status
            d.lastError = (200..<300).contains(status) ? nil : "HTTP \(status)"
        } catch {
            d.lastStatus = nil
            d.lastError = "\(error)".prefix(300).description
        }
        if d.lastError == nil {
            d.status = .delivered
            d.deliveredAt = clock()
            metrics.webhooks(.delivered)
        } else if d.attempts >= configuration.maxAttempts {
            d.status = .failed
            metrics.webhooks(.failed)
            logger.error("webhook delivery failed for good", metadata: ["id": "\(d.id)", "attempts": "\(d.attempts)", "error": "\(d.lastError ?? "")"])
        } else {
            d.nextAttemptAt = now + Self.milliseconds(configuration.delay(afterAttempts: d.attempts))
            metrics.webhooks(.retried)
            logger.warning("webhook delivery will be retried", metadata: ["id": "\(d.id)", "attempts": "\(d.attempts)", "error": "\(d.lastError ?? "")"])
        }
        try await store.recordWebhookAttempt(d)
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }

    /// A POST through the shared HTTP client (TLS, timeouts, connection reuse).
    static func post(_ url: String, _ headers: [(String, String)], _ body: Data, _ timeout: Duration) async throws -> Int {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let seconds = Self.milliseconds(timeout)
        let response = try await HTTPClient.shared.execute(request, timeout: .milliseconds(seconds))
        _ = try await response.body.collect(upTo: 64 << 10)  // read to the end so the connection is reused
        return Int(response.status.code)
    }
}

import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
@testable import SwipeRankServer
import SwipeRankStore
import Synchronization
import Testing

/// Group matches reach the app's backend: a delivery stored with the match, sent signed to a
/// real local receiver, retried with backoff, logged.
@Suite struct WebhookTests {
    static let secret = "webhook-secret-webhook-secret-0123456789"

    /// A local HTTP receiver on a free loopback port: records each request, answers the next
    /// status in `statuses` (then 204).
    final class Receiver: Sendable {
        struct Received: Sendable {
            var headers: HTTPFields
            var body: Data
        }
        let received = Mutex<[Received]>([])
        let statuses: Mutex<[Int]>
        init(statuses: [Int]) { self.statuses = Mutex(statuses) }

        func run(_ body: @escaping @Sendable (Int) async throws -> Void) async throws {
            let router = Router()
            router.post("hook") { request, _ -> Response in
                let bytes = try await request.body.collect(upTo: 1 << 20)
                self.received.withLock { $0.append(Received(headers: request.headers, body: Data(bytes.readableBytesView))) }
                let status = self.statuses.withLock { $0.isEmpty ? 204 : $0.removeFirst() }
                return Response(status: .init(code: status))
            }
            let port = AsyncStream<Int>.makeStream()
            var logger = Logger(label: "receiver")
            logger.logLevel = .error
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                                  onServerRunning: { port.continuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
            let server = Task { try await app.runService(gracefulShutdownSignals: []) }
            defer { server.cancel() }
            var ports = port.stream.makeAsyncIterator()
            let bound = try #require(await ports.next())
            try await body(bound)
        }
    }

    /// Two members match option 1 of a Massachusetts group; returns (group, matched option).
    static func match(_ c: Harness.Client) async throws -> (String, String) {
        try await c.createStudent("ann")
        try await c.createStudent("bob")
        let (group, code) = try await GroupRouteTests.makeGroup(c, "ann")
        #expect(try await c.call(.post, "/groups/join", student: "bob", body: #"{"invite_code":"\#(code)"}"#).status == .ok)
        let deck = try await GroupRouteTests.options(c, group, "ann")
        #expect(try await GroupRouteTests.like(c, group, "ann", id: "a1", option: deck[1]).status == .created)
        let second = try await GroupRouteTests.like(c, group, "bob", id: "b1", option: deck[1])
        #expect(second.json["match_found"] as? Bool == true)
        return (group, deck[1])
    }

    @Test("a match is POSTed signed to the receiver; a 500 is retried after the backoff; the log says delivered; operators only")
    func delivered() async throws {
        let receiver = Receiver(statuses: [500])
        try await receiver.run { port in
            let store = MemoryStore()
            var webhook = WebhookConfiguration(url: "http://127.0.0.1:\(port)/hook", secret: Self.secret)
            webhook.timeout = .seconds(300)  // the receiver's handler shares the test process's executor with CPU-bound suites
            webhook.backoff = .milliseconds(40)
            let config = webhook
            try await Harness(store: store, configure: { $0.webhook = config; $0.operatorKey = ItemRouteTests.key }).run { c in
                let (group, option) = try await Self.match(c)
                let pending = try await store.webhookDeliveries(status: .pending, limit: 10)
                #expect(pending.count == 1 && pending[0].id.hasSuffix(group) && pending[0].event == "group.matched")

                let dispatcher = WebhookDispatcher(store: store, configuration: config, logger: Logger(label: "t"), metrics: ServerMetrics())
                let t0: Int64 = 1_800_000_000_000
                #expect(try await dispatcher.pass(now: t0) == 1)       // 500: to be retried at t0 + 40 ms
                #expect(try await dispatcher.pass(now: t0 + 39) == 0)  // not due yet
                #expect(try await dispatcher.pass(now: t0 + 40) == 1)  // 204
                #expect(try await dispatcher.pass(now: t0 + 10_000_000) == 0)

                let got = receiver.received.withLock { $0 }
                #expect(got.count == 2)
                for request in got {
                    #expect(request.headers[.init("X-SwipeRank-Event")!] == "group.matched")
                    #expect(request.headers[.init("X-SwipeRank-Delivery")!] == pending[0].id)
                    #expect(request.headers[.contentType] == "application/json")
                    // The receiver's check: HMAC-SHA256 over "<t>.<body>" with the shared secret.
                    let signature = try #require(request.headers[.init("X-SwipeRank-Signature")!])
                    let parts = Dictionary(uniqueKeysWithValues: signature.split(separator: ",").map { part in
                        let kv = part.split(separator: "=", maxSplits: 1)
                        return (String(kv[0]), String(kv[1]))
                    })
                    var message = Data("\(parts["t"]!).".utf8)
                    message.append(request.body)
                    let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(Self.secret.utf8)))
                    #expect(parts["v1"] == mac.map { String(format: "%02x", $0) }.joined())
                    #expect(parts["t"] == String(t0 / 1_000) || parts["t"] == String((t0 + 40) / 1_000))
                    let body = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
                    #expect(body["event"] as? String == "group.matched" && body["id"] as? String == pending[0].id)
                    let groupBody = try #require(body["group"] as? [String: Any])
                    #expect(groupBody["session_id"] as? String == group && groupBody["matched_option_id"] as? String == option)
                    #expect(groupBody["status"] as? String == "matched")
                }

                let auth: HTTPFields = [.authorization: "Bearer \(ItemRouteTests.key)"]
                let log = try await c.call(.get, "/webhooks/deliveries", headers: auth)
                let entry = try #require((log.json["deliveries"] as? [[String: Any]])?.first)
                #expect(entry["status"] as? String == "delivered" && entry["attempts"] as? Int == 2 && entry["last_status"] as? Int == 204)
                #expect(entry["last_error"] is NSNull && entry["next_attempt_at"] is NSNull)
                #expect(((entry["payload"] as? [String: Any])?["group"] as? [String: Any])?["session_id"] as? String == group)
                #expect(try await c.call(.get, "/webhooks/deliveries?status=failed", headers: auth).json["deliveries"] as? [Any] != nil)
                let bad = try await c.call(.get, "/webhooks/deliveries?status=lost", headers: auth)
                #expect(bad.status == .badRequest && bad.details["field"] as? String == "status")
                #expect(try await c.call(.get, "/webhooks/deliveries").status == .unauthorized)
                #expect(try await c.call(.get, "/webhooks/deliveries", student: "ann").status == .forbidden)
            }
        }
    }

    @Test("backoff doubles up to the cap; after maxAttempts the delivery is failed; no webhook configured stores nothing")
    func failedAndOff() async throws {
        let store = MemoryStore()
        var settings = WebhookConfiguration(url: "http://127.0.0.1:9/hook", secret: Self.secret)
        settings.maxAttempts = 4
        settings.backoff = .seconds(1)
        settings.maxBackoff = .seconds(3)
        let config = settings
        try await Harness(store: store, configure: { $0.webhook = config }).run { c in _ = try await Self.match(c) }
        let calls = Mutex(0)
        var dispatcher = WebhookDispatcher(store: store, configuration: config, logger: Logger(label: "t"), metrics: ServerMetrics())
        dispatcher.send = { _, _, _, _ in
            calls.withLock { $0 += 1 }
            throw CancellationError()
        }
        var now: Int64 = 1_800_000_000_000  // after the harness clock, when the delivery was stored
        var waits: [Int64] = []
        for _ in 0..<4 {
            #expect(try await dispatcher.pass(now: now) == 1)
            guard let d = try await store.webhookDeliveries(status: nil, limit: 1).first else { break }
            if d.status == .pending {
                waits.append(d.nextAttemptAt - now)
                now = d.nextAttemptAt
            }
        }
        #expect(waits == [1_000, 2_000, 3_000])  // doubled, capped at 3 s
        let final = try #require(try await store.webhookDeliveries(status: nil, limit: 1).first)
        #expect(final.status == .failed && final.attempts == 4 && final.lastError != nil && calls.withLock { $0 } == 4)
        #expect(try await dispatcher.pass(now: now + 1_000_000) == 0)

        let quiet = MemoryStore()
        try await Harness(store: quiet).run { c in _ = try await Self.match(c) }
        #expect(try await quiet.webhookDeliveries(status: nil, limit: 10).isEmpty)
    }
}

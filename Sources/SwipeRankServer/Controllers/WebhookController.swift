import Foundation
import Hummingbird
import SwipeRankStore

/// `GET /webhooks/deliveries` (operator key): the delivery log — what was sent to the app's
/// backend, how often, what it answered — newest first.
struct WebhookController: Sendable {
    typealias Context = SwipeRankRequestContext
    let store: any ServiceStore

    func addRoutes(to group: RouterGroup<Context>, table: RouteTable) {
        group.get("deliveries") { request, _ -> Response in
            let limit = try request.intQuery("limit", default: 50, range: 1...500)
            var status: WebhookDelivery.Status?
            if let raw = request.uri.queryParameters["status"] {
                guard let value = WebhookDelivery.Status(rawValue: String(raw)) else {
                    throw APIError.validation("status must be pending, delivered or failed, got \"\(raw.prefix(32))\"", field: "status")
                }
                status = value
            }
            let deliveries = try await store.webhookDeliveries(status: status, limit: limit)
            return .json(try WireJSON.encode(DeliveriesBody(deliveries: deliveries.map(DeliveryView.init))), cache: CachePolicy.neverStore)
        }
        table.add(.get, "/webhooks/deliveries")
    }
}

/// A response body.
struct DeliveriesBody: Encodable {
    var deliveries: [DeliveryView]
}

/// One delivery as the log shows it.
struct DeliveryView: Encodable {
    var id: String
    var event: String
    var status: String
    var attempts: Int
    var nextAttemptAt: Int64?
    var lastStatus: Int?
    var lastError: String?
    var createdAt: Int64
    var deliveredAt: Int64?
    var payload: JSONValue

    init(_ d: WebhookDelivery) {
        id = d.id
        event = d.event
        status = d.status.rawValue
        attempts = d.attempts
        nextAttemptAt = d.status == .pending ? d.nextAttemptAt : nil
        lastStatus = d.lastStatus
        lastError = d.lastError
        createdAt = d.createdAt
        deliveredAt = d.deliveredAt
        payload = (try? JSONDecoder().decode(JSONValue.self, from: d.payload)) ?? .null
    }

    enum CodingKeys: String, CodingKey {
        case id, event, status, attempts, nextAttemptAt = "next_attempt_at", lastStatus = "last_status", lastError = "last_error"
        case createdAt = "created_at", deliveredAt = "delivered_at", payload
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(event, forKey: .event)
        try c.encode(status, forKey: .status)
        try c.encode(attempts, forKey: .attempts)
        try c.encode(nextAttemptAt, forKey: .nextAttemptAt)
        try c.encode(lastStatus, forKey: .lastStatus)
        try c.encode(lastError, forKey: .lastError)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(deliveredAt, forKey: .deliveredAt)
        try c.encode(payload, forKey: .payload)
    }
}

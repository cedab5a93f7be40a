import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Logging
import ServiceLifecycle
import SwipeRank
import SwipeRankStore

/// One app event as the app sends it.
struct AppEventRequest: Decodable, Sendable {
    /// What each type carries besides `event_id`, `type` and `timestamp`.
    static let fields: [String: (required: Set<String>, optional: Set<String>)] = [
        "identify": (["traits"], []),
        "focus": (["school_id"], ["duration_ms"]),
        "swipe_reaction": (["school_id", "reaction"], []),
        "custom": (["name"], ["properties"]),
    ]

    var eventID: String
    var type: String
    var timestamp: Int64
    var body: [String: JSONValue]

    init(from decoder: any Decoder) throws {
        let object = try JSONValue(from: decoder)
        guard case let .object(fields) = object else {
            throw DecodingError.typeMismatch([String: JSONValue].self, .init(codingPath: decoder.codingPath, debugDescription: "an event is a JSON object"))
        }
        func fail(_ key: String, _ message: String) -> DecodingError {
            DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [AnyKey(key)], debugDescription: message))
        }
        guard case let .string(id)? = fields["event_id"] else { throw fail("event_id", "event_id is a required string") }
        guard case let .string(type)? = fields["type"], let spec = Self.fields[type] else {
            throw fail("type", "type must be one of \(Self.fields.keys.sorted().joined(separator: ", "))")
        }
        guard case let .number(time)? = fields["timestamp"], time == time.rounded(), (0...9_007_199_254_740_991).contains(time) else {
            throw fail("timestamp", "timestamp is Unix milliseconds, an integer in 0…2^53−1")
        }
        var body = fields
        for key in ["event_id", "type", "timestamp"] { body[key] = nil }
        // `item_id` is the generic name of `school_id` (stored under the one name).
        if let item = body.removeValue(forKey: "item_id") {
            guard body["school_id"] == nil else { throw fail("item_id", "give item_id or its alias school_id, not both") }
            body["school_id"] = item
        }
        for key in spec.required where body[key] == nil { throw fail(key, "a \(type) event needs \(key)") }
        if let extra = body.keys.sorted().first(where: { !spec.required.contains($0) && !spec.optional.contains($0) }) {
            throw fail(extra, "a \(type) event has no field \(extra)")
        }
        for (key, value) in body {
            switch (key, value) {
            case ("traits", .object(let o)), ("properties", .object(let o)):
                guard o.count <= 50 else { throw fail(key, "\(key) has at most 50 keys") }
            case ("traits", _), ("properties", _): throw fail(key, "\(key) is a JSON object")
            case ("school_id", .string(let s)), ("reaction", .string(let s)), ("name", .string(let s)):
                guard (1...256).contains(s.unicodeScalars.count) else { throw fail(key, "\(key) has 1…256 characters") }
            case ("duration_ms", .number(let n)):
                guard n == n.rounded(), (0...86_400_000).contains(n) else { throw fail(key, "duration_ms is an integer in 0…86400000") }
            default: throw fail(key, "\(key) has the wrong type")
            }
        }
        eventID = id
        self.type = type
        timestamp = Int64(time)
        self.body = body
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ s: String) { stringValue = s }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// `POST /events`.
struct AppEventBatchRequest: Decodable, Sendable {
    var events: [AppEventRequest]

    enum CodingKeys: String, CodingKey, CaseIterable { case events }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        events = try decoder.container(keyedBy: CodingKeys.self).decode([AppEventRequest].self, forKey: .events)
    }
}

/// `POST /events` (batches, answered 202) and `GET /events?after=` (NDJSON): the app's
/// fire-and-forget events, per student, idempotent by event id.
struct EventController<M: ServableMatcher>: Sendable {
    typealias Context = SwipeRankRequestContext
    let store: any ServiceStore
    let engine: SwipeEngine<M>
    let options: ServiceOptions

    func addRoutes(to group: RouterGroup<Context>, table: RouteTable) {
        group.on("", method: .post) { request, context in
            let student = try context.student
            let body = try await request.jsonBody(context: context)!
            let batch = try WireJSON.decode(AppEventBatchRequest.self, from: body, what: "body", maxBytes: context.maxUploadSize)
            guard (1...options.maxEventsPerBatch).contains(batch.events.count) else {
                throw APIError.validation("events holds 1…\(options.maxEventsPerBatch) events", field: "events")
            }
            let now = options.clock()
            var events: [AppEvent] = []
            for (i, event) in batch.events.enumerated() {
                try ClientID.validate(event.eventID, field: "events[\(i)].event_id")
                if case let .string(school)? = event.body["school_id"], engine.matcher.catalog.row(of: school) == nil {
                    throw APIError.validation("events[\(i)].school_id: no school \(school.prefix(64)) in the catalog",
                                              field: "events[\(i)].school_id")
                }
                let payload = String(decoding: try WireJSON.encode(JSONValue.object(event.body)), as: UTF8.self)
                guard payload.utf8.count <= 8 << 10 else {
                    throw APIError.validation("events[\(i)] is larger than 8 KiB", field: "events[\(i)]")
                }
                events.append(AppEvent(eventID: event.eventID, type: event.type, payload: payload, occurredAt: event.timestamp,
                                       receivedAt: now))
            }
            let added: Int
            do {
                added = try await store.appendAppEvents(events, for: student)
            } catch {
                throw APIError.server
            }
            let answer: [String: JSONValue] = ["accepted": .number(Double(added)), "duplicates": .number(Double(events.count - added))]
            return Response.json(try WireJSON.encode(answer), status: .accepted, cache: CachePolicy.neverStore)
        }
        table.add(.post, "/events")
        group.on("", method: .get) { request, context in
            let student = try context.student
            let after = try request.intQuery("after", default: 0, range: 0...Int(Int32.max))
            let limit = try request.intQuery("limit", default: 1_000, range: 1...10_000)
            let events: [AppEvent]
            do {
                events = try await store.appEvents(of: student, after: after, limit: limit)
            } catch {
                throw APIError.server
            }
            var out = Data()
            for e in events {
                // The stored payload is canonical JSON already: spliced in, not re-encoded.
                let head: [String: JSONValue] = ["seq": .number(Double(e.seq)), "event_id": .string(e.eventID), "type": .string(e.type),
                                                 "timestamp": .number(Double(e.occurredAt)), "received_at": .number(Double(e.receivedAt))]
                var line = try WireJSON.encode(head)
                line.removeLast()
                line.append(contentsOf: Array(",\"data\":".utf8))
                line.append(contentsOf: Array(e.payload.utf8))
                line.append(contentsOf: Array("}\n".utf8))
                out.append(line)
            }
            var headers: HTTPFields = [.contentType: "application/x-ndjson", .cacheControl: CachePolicy.neverStore]
            headers[HTTPField.Name("X-Next-Cursor")!] = String(events.last?.seq ?? after)
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: out)))
        }
        table.add(.get, "/events")
    }
}

/// Deletes app events past the retention period: at start, then hourly; stops at shutdown.
struct EventRetentionService: Service {
    let store: any ServiceStore
    let days: Int
    let clock: @Sendable () -> Int64
    let logger: Logger

    /// Runs until graceful shutdown (add it only when `days` > 0: a service that returns early
    /// would shut the application down).
    func run() async throws {
        try await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let cutoff = clock() - Int64(days) * 86_400_000
                do {
                    let removed = try await store.purgeAppEvents(receivedBefore: cutoff)
                    if removed > 0 { logger.info("app events past retention deleted", metadata: ["count": "\(removed)"]) }
                } catch {
                    logger.error("purging app events failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(3_600))
            }
        }
    }
}

import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import SwipeRank
@testable import SwipeRankServer
import SwipeRankStore
import Testing

/// Issue 29, part 5: a generic catalog speaks of items, not schools; `school_id` stays an alias.
@Suite("Item wire names on a generic catalog")
struct ItemWireTests {
    static let engine: SwipeEngine<ItemMatcher> = {
        do {
            let dir = Fixtures.root.appendingPathComponent("datasets/restaurants")
            let catalog = try Catalog(table: CSVTable(contentsOfFile: dir.appendingPathComponent("restaurants.csv").path),
                                      schema: ItemSchema.load(contentsOfFile: dir.appendingPathComponent("restaurants.schema.json").path))
            return SwipeEngine(matcher: ItemMatcher(catalog: catalog, regionAttribute: "neighborhood"))
        } catch {
            fatalError("\(error)")
        }
    }()
    static let profile = #"{"home": {"latitude": 40.05, "longitude": -74.95}, "max_distance_miles": 3, "preferences": {"quality": 0.8}}"#

    /// The service over the restaurants, as `Harness.run` does for the schools.
    func run(_ test: @escaping @Sendable (Harness.Client) async throws -> Void) async throws {
        var config = ServerConfiguration()
        config.auth = AuthConfiguration(hmacSecret: Fixtures.secret)
        config.service.clock = { 1_700_000_000_000 }
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let parts = try await buildParts(engine: Self.engine, store: MemoryStore(), configuration: config, logger: logger)
        let app = Application(responder: parts.responder, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
        let auth = config.auth
        try await app.test(.router) { client in try await test(Harness.Client(client: client, auth: auth)) }
    }

    @Test("cards carry item and item_id, no school and no matched_majors; requests take item_id or school_id")
    func names() async throws {
        try await run { c in
            #expect(try await c.call(.put, "/student/profile", student: "r", body: Self.profile).status == .created)
            let full = try await c.call(.get, "/student/recommendations?count=3", student: "r")
            let cards = full.json["recommendations"] as? [[String: Any]] ?? []
            #expect(cards.count == 3)
            for card in cards {
                #expect((card["item"] as? [String: Any])?["id"] is String && card["school"] == nil && card["matched_majors"] == nil,
                        "\(card.keys.sorted())")
            }
            // The fast writer's bytes are JSONEncoder's (sorted keys), item sorting before match_score.
            let text = String(decoding: full.body, as: UTF8.self)
            #expect(text.contains(#""is_probe":false,"item":{"#) || text.contains(#""is_probe":true,"item":{"#))
            // The three open cards again, then three new ones.
            let minimal = try await c.call(.get, "/student/recommendations?count=6&fields=minimal", student: "r")
            let all = (minimal.json["recommendations"] as? [[String: Any]] ?? []).compactMap { $0["item_id"] as? String }
            let ids = Array(all.suffix(3))
            #expect(all.count == 6 && !String(decoding: minimal.body, as: UTF8.self).contains("school"))
            let first = try #require((cards.first?["item"] as? [String: Any])?["id"] as? String)

            let swipe = try await c.call(.post, "/student/swipe", student: "r",
                                         body: #"{"swipe_id":"w1","item_id":"\#(first)","action":"like","timestamp":1}"#)
            #expect(swipe.status == .created, "\(String(decoding: swipe.body, as: UTF8.self))")
            let alias = try await c.call(.post, "/student/swipe", student: "r",
                                         body: #"{"swipe_id":"w2","school_id":"\#(ids[0])","action":"dislike","timestamp":2}"#)
            #expect(alias.status == .created)
            let both = try await c.call(.post, "/student/swipe", student: "r",
                                        body: #"{"swipe_id":"w3","school_id":"\#(ids[1])","item_id":"\#(ids[1])","action":"like","timestamp":3}"#)
            #expect(both.status == .badRequest && both.code == "VALIDATION_ERROR")
            let neither = try await c.call(.post, "/student/swipe", student: "r", body: #"{"swipe_id":"w4","action":"like","timestamp":3}"#)
            #expect(neither.status == .badRequest && (neither.error["message"] as? String)?.contains("item_id") == true)
            // The same swipe through the offline queue, by item_id.
            let sync = try await c.call(.post, "/student/sync", student: "r",
                                        body: #"{"swipes":[{"swipe_id":"w5","item_id":"\#(ids[1])","action":"like","timestamp":4}]}"#)
            #expect(sync.status == .ok && sync.json["total_swipes"] as? Int == 3)

            let save = try await c.call(.post, "/student/items/r010/save", student: "r")
            #expect(save.status == .created && save.json["item_id"] as? String == "r010" && save.json["school_id"] == nil)
            let one = try await c.call(.get, "/student/items/r010?fields=minimal", student: "r")
            #expect(one.status == .ok && one.json["item_id"] as? String == "r010")
            let missing = try await c.call(.get, "/student/items/nope", student: "r")
            #expect(missing.status == .notFound && (missing.error["message"] as? String)?.hasPrefix("no item") == true)
            let publicCard = try await c.call(.get, "/items/r010")
            #expect(publicCard.status == .ok && (publicCard.json["item"] as? [String: Any])?["id"] as? String == "r010")
            let events = try await c.call(.post, "/events", student: "r",
                                          body: #"{"events":[{"event_id":"e1","type":"focus","timestamp":5,"item_id":"r010","duration_ms":900}]}"#)
            #expect(events.status == .accepted, "\(String(decoding: events.body, as: UTF8.self))")
        }
    }

    @Test("the college catalog keeps its names")
    func schoolsUnchanged() async throws {
        try await Harness().run { c in
            try await c.createStudent("s")
            let card = (try await c.call(.get, "/student/recommendations?count=1", student: "s").json["recommendations"] as? [[String: Any]])?.first
            #expect(card?["school"] != nil && card?["matched_majors"] != nil && card?["item"] == nil)
            let id = try #require((card?["school"] as? [String: Any])?["id"] as? String)
            #expect(try await c.call(.get, "/items/\(id)").json["school"] != nil, "the public card under /items keeps the school key")
            let swipe = try await c.call(.post, "/student/swipe", student: "s",
                                         body: #"{"swipe_id":"w1","item_id":"\#(id)","action":"like","timestamp":1}"#)
            #expect(swipe.status == .created, "item_id is accepted on the college catalog too")
        }
    }
}

/// Issue 31: what a browser app or a client generator needs from the service itself.
@Suite("CORS and the served OpenAPI description")
struct ClientSupportTests {
    @Test("GET /openapi.yaml serves openapi.yaml byte for byte (the compiled-in copy is current)")
    func openAPI() async throws {
        let file = try String(contentsOf: Fixtures.root.appendingPathComponent("Sources/SwipeRankServer/openapi.yaml"), encoding: .utf8)
        #expect(OpenAPIDocument.yaml + "\n" == file, "run bash scripts/embed-openapi after editing openapi.yaml")
        try await Harness().run { c in
            let reply = try await c.call(.get, "/openapi.yaml")
            #expect(reply.status == .ok && String(decoding: reply.body, as: UTF8.self) == file)
            #expect(reply.headers[.contentType]?.hasPrefix("application/yaml") == true)
        }
    }

    @Test("swipes through the offline queue count in swiperank_swipes_recorded_total; replays do not")
    func syncMetrics() async throws {
        try await Harness().run { c in
            try await c.createStudent("m")
            let deck = try await c.deck("m", count: 3)
            let body = #"{"swipes":[{"swipe_id":"a","school_id":"\#(deck[0])","action":"like","timestamp":1},"#
                + #"{"swipe_id":"b","school_id":"\#(deck[1])","action":"dislike","timestamp":2}]}"#
            #expect(try await c.call(.post, "/student/sync", student: "m", body: body).status == .ok)
            #expect(try await c.call(.post, "/student/sync", student: "m", body: body).status == .ok, "a replay")
            #expect(try await c.swipe("m", id: "c", school: deck[2], like: true).status == .created)
            let metrics = String(decoding: try await c.call(.get, "/metrics").body, as: UTF8.self)
            #expect(metrics.contains("swiperank_swipes_recorded_total 3"), "\(metrics.split(separator: "\n").filter { $0.contains("swipes_recorded") })")
        }
    }

    @Test("with --cors-origins a preflight is answered and answers name the origin; others and the default get no CORS header")
    func cors() async throws {
        try await Harness(configure: { $0.corsOrigins = ["https://app.example"] }).run { c in
            let pre = try await c.call(.options, "/student/recommendations", body: nil, contentType: nil,
                                       headers: [.origin: "https://app.example", .accessControlRequestMethod: "GET"])
            #expect(pre.status == .noContent && pre.headers[.accessControlAllowOrigin] == "https://app.example")
            #expect(pre.headers[.accessControlAllowHeaders]?.contains("Authorization") == true)
            let other = try await c.call(.options, "/student/recommendations", body: nil, contentType: nil,
                                         headers: [.origin: "https://evil.example", .accessControlRequestMethod: "GET"])
            #expect(other.headers[.accessControlAllowOrigin] == nil)
            // A real request (an error here) carries the origin and the exposed headers.
            let get = try await c.call(.get, "/student/recommendations", headers: [.origin: "https://app.example"])
            #expect(get.status == .unauthorized && get.headers[.accessControlAllowOrigin] == "https://app.example")
            #expect(get.headers[.accessControlExposeHeaders]?.contains("X-Request-ID") == true)
        }
        try await Harness().run { c in
            let get = try await c.call(.get, "/health", headers: [.origin: "https://app.example"])
            #expect(get.status == .ok && get.headers[.accessControlAllowOrigin] == nil)
        }
    }
}

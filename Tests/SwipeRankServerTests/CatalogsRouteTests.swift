import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import SwipeRank
@testable import SwipeRankServer
import SwipeRankStore
import Testing

/// Issue 29, part 4: several catalogs in one deployment, one learned state per catalog.
@Suite("Several catalogs in one service")
struct CatalogsRouteTests {
    static let key = ItemRouteTests.key

    /// Colleges by default, the restaurants under /catalogs/restaurants/, both editable.
    func run(_ store: any ServiceStore, _ test: @escaping @Sendable (Harness.Client) async throws -> Void) async throws {
        var config = ServerConfiguration()
        config.auth = AuthConfiguration(hmacSecret: Fixtures.secret)
        config.service.clock = { 1_700_000_000_000 }
        config.operatorKey = Self.key
        config.service.migrationSweep = false
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let restaurants = ItemWireTests.engine
        let table = try CSVTable(contentsOfFile: Fixtures.root.appendingPathComponent("datasets/restaurants/restaurants.csv").path)
        let source = CatalogSource<ItemMatcher>(base: table, idColumn: "id") { table in
            let dir = Fixtures.root.appendingPathComponent("datasets/restaurants")
            return SwipeEngine(matcher: ItemMatcher(catalog: try Catalog(table: table, schema: ItemSchema.load(contentsOfFile: dir.appendingPathComponent("restaurants.schema.json").path)),
                                                    regionAttribute: "neighborhood"))
        }
        let served = try ServedCatalog(name: "restaurants", engine: restaurants, source: source)
        let (responder, _) = try await buildCatalogs(engine: Fixtures.engine, store: store, configuration: config, catalog: ItemRouteTests.source,
                                                     catalogs: [served], logger: logger)
        let app = Application(responder: responder, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
        let auth = config.auth
        try await app.test(.router) { client in try await test(Harness.Client(client: client, auth: auth)) }
    }

    func op(_ c: Harness.Client, _ method: HTTPRequest.Method, _ uri: String, body: String? = nil) async throws -> Reply {
        try await c.call(method, uri, body: body, headers: [.authorization: "Bearer \(Self.key)"])
    }

    @Test("one student, one state per catalog; groups and items stay in their catalog; erasure reaches every catalog")
    func separate() async throws {
        let store = MemoryStore()
        try await run(store) { c in
            try await c.createStudent("s")
            #expect(try await c.call(.put, "/catalogs/restaurants/student/profile", student: "s", body: ItemWireTests.profile).status == .created)
            let schools = try await c.deck("s", count: 3)
            let food = try await c.call(.get, "/catalogs/restaurants/student/recommendations?count=4&fields=minimal", student: "s")
            let dishes = (food.json["recommendations"] as? [[String: Any]] ?? []).compactMap { $0["item_id"] as? String }
            #expect(schools.count == 3 && dishes.count == 4 && dishes.allSatisfy { $0.hasPrefix("r") })
            for (i, id) in dishes.enumerated() {
                let r = try await c.call(.post, "/catalogs/restaurants/student/swipe", student: "s",
                                         body: #"{"swipe_id":"d\#(i)","item_id":"\#(id)","action":"like","timestamp":\#(i)}"#)
                #expect(r.status == .created)
            }
            #expect(try await c.swipe("s", id: "k1", school: schools[0], like: true).status == .created)
            // A restaurant is not a card of the college catalog, and the states are apart.
            #expect(try await c.swipe("s", id: "k2", school: dishes[0], like: true).status != .created)
            #expect(try await c.call(.get, "/student/learning-state", student: "s").json["total_swipes"] as? Int == 1)
            #expect(try await c.call(.get, "/catalogs/restaurants/student/learning-state", student: "s").json["total_swipes"] as? Int == 4)
            // The same swipe id in the other catalog is another swipe, not a replay.
            let next = try await c.call(.get, "/catalogs/restaurants/student/recommendations?count=1&fields=minimal", student: "s")
            let dish = try #require((next.json["recommendations"] as? [[String: Any]])?.first?["item_id"] as? String)
            let same = try await c.call(.post, "/catalogs/restaurants/student/swipe", student: "s",
                                        body: #"{"swipe_id":"k1","item_id":"\#(dish)","action":"like","timestamp":9}"#)
            #expect(same.status == .created)

            // Groups: created in a catalog, joined only through it.
            let group = try await c.call(.post, "/catalogs/restaurants/groups", student: "s", body: #"{"filter": {"cuisine": ["thai", "vegan"]}, "quorum_n": 2}"#)
            #expect(group.status == .created, "\(String(decoding: group.body, as: UTF8.self))")
            let code = try #require(group.json["invite_code"] as? String)
            #expect(try await c.call(.put, "/student/profile", student: "t", body: Fixtures.profile).status == .created)
            #expect(try await c.call(.post, "/groups/join", student: "t", body: #"{"invite_code":"\#(code)"}"#).status == .notFound)
            #expect(try await c.call(.put, "/catalogs/restaurants/student/profile", student: "t", body: ItemWireTests.profile).status == .created)
            #expect(try await c.call(.post, "/catalogs/restaurants/groups/join", student: "t", body: #"{"invite_code":"\#(code)"}"#).status == .ok)

            // Item edits: each catalog its own; the other keeps serving as it was.
            #expect(try await op(c, .patch, "/catalogs/restaurants/items/r001", body: #"{"name": "Renamed Diner"}"#).status == .ok)
            #expect(try await c.call(.get, "/catalogs/restaurants/items/r001").json["item"] != nil)
            #expect(try await c.call(.get, "/items/r001").status == .notFound, "not a school")
            #expect(try await op(c, .patch, "/items/100654", body: #"{"name": "Renamed College"}"#).status == .ok)
            #expect((try await op(c, .get, "/catalogs/restaurants/items/r001/fields").json["fields"] as? [String: String])?["name"] == "Renamed Diner")
            #expect((try await op(c, .get, "/items/100654/fields").json["fields"] as? [String: String])?["name"] == "Renamed College")
            let delta = try await c.call(.get, "/catalogs/restaurants/student/sync?catalog_since=0&fields=minimal", student: "s")
            let updated = ((delta.json["catalog"] as? [String: Any])?["updated_items"] as? [[String: Any]] ?? []).compactMap { $0["item_id"] as? String }
            #expect(updated == ["r001"], "only the restaurants' edit")

            #expect(try await c.call(.get, "/catalogs/nope/student/learning-state", student: "s").status == .notFound)
            // Erasing a student through one catalog erases them in every catalog.
            #expect(try await c.call(.delete, "/catalogs/restaurants/student", student: "s").status == .noContent)
            #expect(try await c.call(.get, "/student/learning-state", student: "s").status == .notFound)
            #expect(try await c.call(.get, "/catalogs/restaurants/student/learning-state", student: "s").status == .notFound)
            #expect(try await c.call(.delete, "/student", student: "s").status == .notFound, "nothing left")
        }
        // Stored apart: the default catalog lists only its own students.
        let ids = try await NamespacedStore.make(store, catalog: nil).studentIDs(after: nil, limit: 10)
        let food = try await NamespacedStore.make(store, catalog: "restaurants").studentIDs(after: nil, limit: 10)
        #expect(ids == ["t"] && food == ["t"])
    }

    @Test("each catalog's view of the store: its own students in order, paged; its own groups and item edits")
    func namespaces() async throws {
        let store = MemoryStore()
        let views = [nil, "x", "y"].map { NamespacedStore.make(store, catalog: $0) }
        for (view, ids) in zip(views, [["a", "b", "c"], ["a", "b"], ["a"]]) {
            for id in ids {
                _ = try await view.append([StoredEvent(kind: .profile, payload: Data("{}".utf8), createdAt: 1)], to: id, expectedVersion: 0,
                                          update: StudentUpdate(profile: Data("{}".utf8)))
            }
        }
        func all(_ view: any ServiceStore, page: Int) async throws -> [String] {
            var out: [String] = [], after: String?
            while true {
                let ids = try await view.studentIDs(after: after, limit: page)
                guard let last = ids.last else { return out }
                out += ids
                after = last
            }
        }
        for page in [1, 2, 10] {
            #expect(try await all(views[0], page: page) == ["a", "b", "c"])
            #expect(try await all(views[1], page: page) == ["a", "b"])
            #expect(try await all(views[2], page: page) == ["a"])
        }
        let missing = try await views[1].student("c"), found = try await views[1].student("a")
        #expect(missing == nil && found?.studentID == "a")
        let group = GroupRecord(groupID: "g1", inviteCode: "CODE", creatorID: "a", status: "open", members: ["a"], state: Data(),
                                version: 1, createdAt: 1, updatedAt: 1)
        #expect(try await views[1].createGroup(group))
        #expect(try await views[1].group(inviteCode: "CODE")?.members == ["a"])
        let otherCode = try await views[0].group(inviteCode: "CODE"), otherID = try await views[2].group("g1")
        #expect(otherCode == nil && otherID == nil)
        #expect(try await views[2].groups(ofMember: "a", status: nil, limit: 10).isEmpty)
        #expect(try await views[1].appendCatalogChanges([CatalogChange(itemID: "r1", fields: nil, createdAt: 1)], expectedSequence: 0) == 1)
        #expect(try await views[2].appendCatalogChanges([CatalogChange(itemID: "r1", fields: ["id": "r1"], createdAt: 2)], expectedSequence: 1) == 2)
        #expect(try await views[1].catalogChanges(after: 0, limit: 10).map(\.seq) == [1])
        #expect(try await views[2].catalogChanges(after: 0, limit: 10).map(\.itemID) == ["r1"])
        let none = try await views[0].catalogChanges(after: 0, limit: 10), sequence = try await views[0].catalogSequence()
        #expect(none.isEmpty && sequence == 2)
    }

    @Test("a token whose subject holds a control character is refused (it could name another catalog's key)")
    func controlCharacters() async throws {
        try await run(MemoryStore()) { c in
            let reply = try await c.call(.get, "/student/learning-state", student: "\u{1}restaurants\u{1}s")
            #expect(reply.status == .unauthorized && reply.code == "AUTH_INVALID")
        }
    }
}

import Foundation
import HTTPTypes
import SwipeRank
import SwipeRankColleges
@testable import SwipeRankServer
import SwipeRankStore
import Synchronization
import Testing

/// Issue 29, part 2: operators add, change and delete items while the service runs.
@Suite("Item API")
struct ItemRouteTests {
    static let key = "operator-key-operator-key-operator-key-0123"
    static let source: CatalogSource<SchoolMatcher> = {
        do {
            let schools = try CSVTable(contentsOfFile: Fixtures.root.appendingPathComponent("datasets/schools.csv").path)
            let majors = try CSVTable(contentsOfFile: Fixtures.root.appendingPathComponent("datasets/school_majors.csv").path)
            return CatalogSource(base: schools, idColumn: "unitid") { table in
                SwipeEngine(matcher: SchoolMatcher(schools: try SchoolCatalog(schools: table, majors: SchoolCatalog.programs(majors, ofSchoolsIn: table))))
            }
        } catch {
            fatalError("\(error)")
        }
    }()

    func harness(_ store: any ServiceStore, key: String? = Self.key, maxEdits: Int = 200_000) -> Harness {
        Harness(store: store, catalog: Self.source, configure: { $0.operatorKey = key; $0.maxItemEdits = maxEdits })
    }

    /// A school row of the shipped file as a JSON object, under another id and name.
    static func newSchool(_ id: String, name: String) -> String {
        let base = try! source.base()
        let header = base.header, row = base.rows[0].fields
        var fields: [String: Any] = [:]
        for (k, v) in zip(header, row) { fields[k] = v }
        fields["unitid"] = id
        fields["name"] = name
        return String(decoding: try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]), as: UTF8.self)
    }

    func op(_ c: Harness.Client, _ method: HTTPRequest.Method, _ uri: String, body: String? = nil, key: String = Self.key,
            type: String = "application/json") async throws -> Reply {
        try await c.call(method, uri, body: body, contentType: type, headers: [.authorization: "Bearer \(key)"])
    }

    @Test("only the operator key opens the item routes")
    func auth() async throws {
        try await harness(MemoryStore()).run { c in
            #expect(try await c.call(.get, "/items/100654/fields").code == "AUTH_REQUIRED")
            let student = try await c.call(.get, "/items/100654/fields", student: "s1")
            #expect(student.status == .forbidden && student.code == "ACCESS_DENIED")
            #expect(try await op(c, .get, "/items/100654/fields", key: Self.key + "x").status == .forbidden)
            let ok = try await op(c, .get, "/items/100654/fields")
            #expect(ok.status == .ok && (ok.json["fields"] as? [String: String])?["name"] == "Alabama A & M University")
            #expect(try await op(c, .get, "/items/nope/fields").code == "NOT_FOUND")
        }
        try await harness(MemoryStore(), key: nil).run { c in
            let off = try await op(c, .get, "/items/100654/fields")
            #expect(off.status == .forbidden && (off.error["message"] as? String)?.contains("SWIPERANK_OPERATOR_KEY") == true)
        }
    }

    @Test("a source read on first use: not at start, once on the first item request, its error a 500")
    func lazyBase() async throws {
        let reads = Mutex(0)
        let plain = Self.source
        let lazy = CatalogSource<SchoolMatcher>(idColumn: "unitid", makeEngine: plain.makeEngine) {
            reads.withLock { $0 += 1 }
            return try plain.base()
        }
        #expect(!lazy.isBaseLoaded)
        try await Harness(store: MemoryStore(), catalog: lazy, configure: { $0.operatorKey = Self.key }).run { c in
            #expect(reads.withLock { $0 } == 0)
            let ok = try await op(c, .get, "/items/100654/fields")
            #expect(ok.status == .ok && (ok.json["fields"] as? [String: String])?["name"] == "Alabama A & M University")
            #expect(try await op(c, .get, "/items/100663/fields").status == .ok)
            #expect(reads.withLock { $0 } == 1)
        }
        let failing = CatalogSource<SchoolMatcher>(idColumn: "unitid", makeEngine: plain.makeEngine) {
            throw DataError(.invalidValue, source: "schools.csv", detail: "the catalog file changed since the service started")
        }
        try await Harness(store: MemoryStore(), catalog: failing, configure: { $0.operatorKey = Self.key }).run { c in
            let reply = try await op(c, .get, "/items/100654/fields")
            #expect(reply.status == .internalServerError)
        }
    }

    @Test("add, change, delete: served at once, stored, and still there after a restart")
    func editsPersist() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-items-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("db.sqlite").path
        let count = try Self.source.base().rows.count
        let swiped = Box<String>("")
        try await harness(try SQLiteStore(path: path)).run { c in
            // A student who swiped a school that is about to be deleted.
            try await c.createStudent("s1")
            let deck = try await c.deck("s1", count: 4)
            for (i, school) in deck.enumerated() {
                #expect(try await c.swipe("s1", id: "w\(i)", school: school, like: i % 2 == 0).status == .created)
            }
            swiped.value = deck[0]
            #expect(try await c.call(.get, "/schools/990001").status == .notFound)
            let added = try await op(c, .put, "/items/990001", body: Self.newSchool("990001", name: "New College"))
            #expect(added.status == .ok, "\(String(decoding: added.body, as: UTF8.self))")
            #expect(added.json["applied"] as? Int == 1)
            let catalog = added.json["catalog"] as? [String: Any]
            #expect(catalog?["sequence"] as? Int == 1 && catalog?["items"] as? Int == count + 1)
            let school = try await c.call(.get, "/schools/990001")
            #expect(school.status == .ok && String(decoding: school.body, as: UTF8.self).contains("New College"))

            let patched = try await op(c, .patch, "/items/100663", body: #"{"name": "UAB", "tuition_in_state": 9001}"#)
            #expect(patched.status == .ok && (patched.json["catalog"] as? [String: Any])?["sequence"] as? Int == 2)
            let fields = try await op(c, .get, "/items/100663/fields").json["fields"] as? [String: String]
            #expect(fields?["name"] == "UAB" && fields?["tuition_in_state"] == "9001" && fields?["city"] == "Birmingham")

            #expect(try await op(c, .delete, "/items/\(swiped.value)").status == .ok)
            #expect(try await c.call(.get, "/schools/\(swiped.value)").status == .notFound)
            #expect(try await op(c, .delete, "/items/\(swiped.value)").code == "NOT_FOUND")
            // The student is carried over: swipes intact, the deleted school never served.
            let next = try await c.call(.get, "/student/recommendations?count=10&fields=minimal", student: "s1")
            #expect(next.status == .ok && next.json["total_swipes"] as? Int == 4)
            let ids = (next.json["recommendations"] as? [[String: Any]] ?? []).compactMap { $0["school_id"] as? String }
            #expect(!ids.contains(swiped.value))
            let health = try await c.call(.get, "/health").json
            #expect((health["catalog"] as? [String: Any])?["sequence"] as? Int == 3)
        }
        // A restart on the same database and catalog file serves the edited catalog.
        try await harness(try SQLiteStore(path: path)).run { c in
            #expect(try await c.call(.get, "/schools/990001").status == .ok)
            #expect(try await c.call(.get, "/schools/\(swiped.value)").status == .notFound)
            #expect((try await op(c, .get, "/items/100663/fields").json["fields"] as? [String: String])?["name"] == "UAB")
            let state = try await c.call(.get, "/student/learning-state", student: "s1")
            #expect(state.status == .ok && state.json["total_swipes"] as? Int == 4)
            let health = try await c.call(.get, "/health").json
            #expect((health["catalog"] as? [String: Any])?["sequence"] as? Int == 3)
            #expect((health["catalog"] as? [String: Any])?["items"] as? Int == count)
        }
    }

    @Test("bad edits: the error envelope naming the row and field, nothing applied")
    func validation() async throws {
        let store = MemoryStore()
        try await harness(store).run { c in
            let column = try await op(c, .patch, "/items/100654", body: #"{"colour": "red"}"#)
            #expect(column.status == .badRequest && column.code == "VALIDATION_ERROR")
            let row = (column.details["rows"] as? [[String: Any]])?.first
            #expect(row?["field"] as? String == "colour" && row?["item_id"] as? String == "100654")
            // A value the schema rejects is found by building the catalog, and named.
            let type = try await op(c, .patch, "/items/100654", body: #"{"sat_avg": "high"}"#)
            #expect(type.status == .badRequest)
            let typeRow = (type.details["rows"] as? [[String: Any]])?.first
            #expect(typeRow?["field"] as? String == "sat_avg" && (typeRow?["reason"] as? String)?.contains("high") == true)
            #expect(try await op(c, .put, "/items/100654", body: #"{"unitid": "1"}"#).status == .badRequest, "id mismatch")
            #expect(try await op(c, .put, "/items/100654", body: #"[1]"#).status == .badRequest)
            #expect(try await op(c, .put, "/items/100654", body: #"{"name": {"a": 1}}"#).status == .badRequest)
            #expect(try await op(c, .patch, "/items/nope", body: #"{"name": "x"}"#).code == "NOT_FOUND")
            #expect(try await store.catalogSequence() == 0, "nothing applied")
            let health = try await c.call(.get, "/health").json
            #expect((health["catalog"] as? [String: Any])?["sequence"] as? Int == 0)
        }
    }

    @Test("bulk NDJSON: one bad line rejects the batch and is named; partial=true applies the rest")
    func bulk() async throws {
        let store = MemoryStore()
        try await harness(store).run { c in
            let lines = [
                #"{"op": "put", "id": "990010", "fields": \#(Self.newSchool("990010", name: "Bulk One"))}"#,
                #"{"op": "patch", "id": "100654", "fields": {"name": "Renamed"}}"#,
                #"{"id": "990011", "fields": \#(Self.newSchool("990011", name: "Bulk Two"))}"#,
                #"{"op": "patch", "id": "100663", "fields": {"admission_rate": "lots"}}"#,
                #"{"op": "delete", "id": "100690"}"#,
            ]
            let body = lines.joined(separator: "\n") + "\n"
            let rejected = try await op(c, .post, "/items/bulk", body: body, type: "application/x-ndjson")
            #expect(rejected.status == .badRequest, "\(String(decoding: rejected.body, as: UTF8.self))")
            let rows = rejected.details["rows"] as? [[String: Any]] ?? []
            #expect(rows.count == 1 && rows.first?["line"] as? Int == 4 && rows.first?["item_id"] as? String == "100663")
            #expect(rows.first?["path"] as? String == "$[3]" && rows.first?["field"] as? String == "admission_rate")
            #expect(try await store.catalogSequence() == 0)
            #expect(try await c.call(.get, "/schools/990010").status == .notFound)

            let partial = try await op(c, .post, "/items/bulk?partial=true", body: body, type: "application/x-ndjson")
            #expect(partial.status == .ok && partial.json["applied"] as? Int == 4)
            #expect((partial.json["rejected"] as? [[String: Any]])?.first?["line"] as? Int == 4)
            #expect(try await store.catalogSequence() == 4)
            #expect(try await c.call(.get, "/schools/990011").status == .ok)
            #expect(try await c.call(.get, "/schools/100690").status == .notFound)

            // Malformed uploads: a line that is not an edit, the wrong media type.
            let malformed = try await op(c, .post, "/items/bulk", body: "{\"op\": \"delete\", \"id\": \"1\"}\nnot json\n", type: "application/x-ndjson")
            #expect(malformed.status == .badRequest && malformed.details["line"] as? Int == 2)
            let unknownKey = try await op(c, .post, "/items/bulk", body: #"{"id": "1", "feilds": {}}"#, type: "application/x-ndjson")
            #expect(unknownKey.status == .badRequest && unknownKey.details["path"] as? String == "$[0].feilds")
            #expect(try await op(c, .post, "/items/bulk", body: "", type: "application/x-ndjson").status == .badRequest)
            #expect(try await op(c, .post, "/items/bulk", body: "x", type: "text/csv").status == .unsupportedMediaType)
            #expect(try await store.catalogSequence() == 4)
        }
    }

    @Test("an upload over the edit limit is 413 and applies nothing")
    func tooMany() async throws {
        let store = MemoryStore()
        try await harness(store, maxEdits: 3).run { c in
            let body = (0..<4).map { #"{"op": "patch", "id": "100654", "fields": {"name": "N\#($0)"}}"# }.joined(separator: "\n")
            let reply = try await op(c, .post, "/items/bulk", body: body, type: "application/x-ndjson")
            #expect(reply.status == .contentTooLarge && reply.code == "PAYLOAD_TOO_LARGE" && reply.details["limit"] as? Int == 3)
            #expect(try await store.catalogSequence() == 0)
            let three = (0..<3).map { #"{"op": "patch", "id": "100654", "fields": {"name": "N\#($0)"}}"# }.joined(separator: "\n")
            #expect(try await op(c, .post, "/items/bulk", body: three, type: "application/x-ndjson").status == .ok)
            #expect(try await store.catalogSequence() == 3)
        }
    }

    @Test("with a population prior loaded, an edit of features is refused naming the prior; a new name is not a new catalog")
    func priorRefusesEdits() async throws {
        let base = Fixtures.engine
        let catalog = base.matcher.catalog
        let prior = PopulationPrior(catalogFingerprint: base.catalogFingerprint, featureCount: catalog.dimension,
                                    termNames: base.matcher.termNames, weightShift: [Double](repeating: 0, count: base.modelDimension),
                                    itemEffects: [Double](repeating: 0, count: catalog.count), students: 1, swipes: 1, itemPrecision: 5)
        let plain = Self.source
        let source = CatalogSource<SchoolMatcher>(base: try plain.base(), idColumn: "unitid") { table in
            try plain.makeEngine(table).withPopulation(prior)
        }
        let store = MemoryStore()
        try await Harness(store: store, engine: try base.withPopulation(prior), catalog: source, configure: { $0.operatorKey = Self.key }).run { c in
            // The fingerprint covers ids and feature values: a name is display text.
            #expect(try await op(c, .patch, "/items/100654", body: #"{"name": "Renamed"}"#).status == .ok)
            #expect(try await store.catalogSequence() == 1)
            let reply = try await op(c, .patch, "/items/100654", body: #"{"sat_avg": 1400}"#)
            #expect(reply.status == .badRequest)
            let reason = (reply.details["rows"] as? [[String: Any]])?.first?["reason"] as? String
            #expect(reason?.contains("another catalog") == true, "\(reason ?? "")")
            #expect(try await store.catalogSequence() == 1)
        }
    }

    @Test("delta sync: a client's precached cards are refreshed, deleted ones named; a queued swipe on a deleted card is its own outcome")
    func deltaSync() async throws {
        try await harness(MemoryStore()).run { c in
            try await c.createStudent("s1")
            let deck = try await c.deck("s1", count: 5)
            #expect(try await op(c, .patch, "/items/\(deck[0])", body: #"{"name": "Renamed Card"}"#).status == .ok)
            #expect(try await op(c, .delete, "/items/\(deck[1])").status == .ok)
            #expect(try await op(c, .put, "/items/990030", body: Self.newSchool("990030", name: "Brand New")).status == .ok)
            #expect(try await op(c, .patch, "/items/\(deck[0])", body: #"{"name": "Renamed Twice"}"#).status == .ok)

            let sync = try await c.call(.get, "/student/sync?since=0&catalog_since=0", student: "s1")
            #expect(sync.status == .ok)
            let catalog = try #require(sync.json["catalog"] as? [String: Any])
            #expect(catalog["cursor"] as? Int == 4 && catalog["has_more"] as? Bool == false)
            let updated = catalog["updated_items"] as? [[String: Any]] ?? []
            let ids = updated.compactMap { ($0["school"] as? [String: Any])?["id"] as? String }
            #expect(ids == ["990030", deck[0]], "each item once, in order of its last change: \(updated.first?.keys.sorted() ?? [])")
            #expect(String(decoding: try JSONSerialization.data(withJSONObject: updated), as: UTF8.self).contains("Renamed Twice"))
            #expect(updated.first?["match_score"] != nil, "the student's own match")
            #expect(catalog["deleted_items"] as? [String] == [deck[1]])
            // From the cursor on: nothing; without catalog_since the answer is as before.
            let again = try await c.call(.get, "/student/sync?since=0&catalog_since=4", student: "s1").json["catalog"] as? [String: Any]
            #expect((again?["updated_items"] as? [Any])?.isEmpty == true && again?["cursor"] as? Int == 4)
            #expect(try await c.call(.get, "/student/sync?since=0", student: "s1").json["catalog"] == nil)
            #expect(try await c.call(.get, "/student/sync?catalog_since=-1", student: "s1").status == .badRequest)

            // The offline queue: a swipe on the deleted card and one on a live card.
            let queued = #"{"swipes": [{"swipe_id": "q1", "school_id": "\#(deck[1])", "action": "like", "timestamp": 5},"#
                + #"{"swipe_id": "q2", "school_id": "\#(deck[2])", "action": "dislike", "timestamp": 6}]}"#
            let reply = try await c.call(.post, "/student/sync", student: "s1", body: queued)
            #expect(reply.status == .ok)
            let results = reply.json["results"] as? [[String: Any]] ?? []
            #expect(results.count == 2 && results[0]["status"] as? Int == 404 && results[1]["status"] as? Int == 200)
            #expect(((results[0]["error"] as? [String: Any])?["message"] as? String)?.contains(deck[1]) == true)
            #expect(reply.json["total_swipes"] as? Int == 1)
        }
    }

    @Test("an edit on one instance reaches another sharing the store")
    func twoInstances() async throws {
        let store = MemoryStore()
        try await harness(store).run { a in
            try await harness(store).run { b in
                #expect(try await b.call(.get, "/schools/990020").status == .notFound)
                #expect(try await op(a, .put, "/items/990020", body: Self.newSchool("990020", name: "Shared")).status == .ok)
                // B polls the store's sequence (every 20 ms in tests): bounded wait, no timing assertion.
                var seen = false
                for _ in 0..<500 where !seen {
                    seen = try await b.call(.get, "/schools/990020").status == .ok
                    if !seen { try await Task.sleep(for: .milliseconds(20)) }
                }
                #expect(seen)
                // B writes on top of A's edit (its sequence check catches up first).
                #expect(try await op(b, .patch, "/items/990020", body: #"{"name": "Shared 2"}"#).status == .ok)
                #expect(try await store.catalogSequence() == 2)
            }
        }
    }
}

import Foundation
import HTTPTypes
import SwipeRankServer
import SwipeRankStore
import Testing

@Suite struct EventRouteTests {
    static let batch = """
        {"events":[
          {"event_id":"e1","type":"identify","timestamp":1,"traits":{"grade":11,"plan":"free"}},
          {"event_id":"e2","type":"focus","timestamp":2,"school_id":"166027","duration_ms":4500},
          {"event_id":"e3","type":"swipe_reaction","timestamp":3,"school_id":"166027","reaction":"superlike"},
          {"event_id":"e4","type":"custom","timestamp":4,"name":"opened_map","properties":{"zoom":3,"tags":["a","b"]}}
        ]}
        """

    @Test("a batch is answered 202, read back as NDJSON after a cursor, idempotent by event id, and erased with the student")
    func roundTrip() async throws {
        try await Harness().run { c in
            let first = try await c.call(.post, "/events", student: "ev", body: Self.batch)
            #expect(first.status == .accepted && first.json["accepted"] as? Int == 4 && first.json["duplicates"] as? Int == 0)
            let again = try await c.call(.post, "/events", student: "ev", body: Self.batch)
            #expect(again.status == .accepted && again.json["accepted"] as? Int == 0 && again.json["duplicates"] as? Int == 4)
            let all = try await c.call(.get, "/events", student: "ev")
            #expect(all.status == .ok && all.headers[.contentType] == "application/x-ndjson")
            let lines = String(decoding: all.body, as: UTF8.self).split(separator: "\n")
            #expect(lines.count == 4 && all.headers[.init("X-Next-Cursor")!] == "4")
            let parsed = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(parsed.map { $0["event_id"] as? String } == ["e1", "e2", "e3", "e4"])
            #expect(parsed.map { $0["seq"] as? Int } == [1, 2, 3, 4])
            #expect((parsed[3]["data"] as? [String: Any])?["name"] as? String == "opened_map")
            #expect((parsed[0]["data"] as? [String: Any])?["traits"] as? [String: Any] != nil && parsed[1]["timestamp"] as? Int == 2)
            let page = try await c.call(.get, "/events?after=2&limit=1", student: "ev")
            #expect(String(decoding: page.body, as: UTF8.self).contains(#""event_id":"e3""#) && page.headers[.init("X-Next-Cursor")!] == "3")
            // Another student sees only their own.
            #expect(try await c.call(.get, "/events", student: "other").body.isEmpty)
            #expect(try await c.call(.delete, "/student", student: "ev").status == .noContent)
            #expect(try await c.call(.get, "/events", student: "ev").body.isEmpty)
        }
    }

    @Test("bad events are 400 naming the event and the field; nothing of the batch is stored", arguments: [
        (#"{"events":[]}"#, "events"),
        (#"{"events":[{"event_id":"x","type":"teleport","timestamp":1}]}"#, "events[0].type"),
        (#"{"events":[{"event_id":"x","type":"focus","timestamp":1}]}"#, "events[0].school_id"),
        (#"{"events":[{"event_id":"x","type":"focus","timestamp":1,"school_id":"nope"}]}"#, "events[0].school_id"),
        (#"{"events":[{"event_id":"ok","type":"custom","timestamp":1,"name":"n"},{"event_id":"y","type":"custom","timestamp":-5,"name":"n"}]}"#, "events[1].timestamp"),
        (#"{"events":[{"event_id":"x","type":"identify","timestamp":1,"traits":[1]}]}"#, "events[0].traits"),
        (#"{"events":[{"event_id":"x","type":"identify","timestamp":1,"traits":{},"color":"red"}]}"#, "events[0].color"),
        (#"{"events":[{"event_id":"bad id","type":"custom","timestamp":1,"name":"n"}]}"#, "events[0].event_id"),
        (#"{"events":[{"event_id":"x","type":"custom","timestamp":1,"name":"n","properties":{"big":"\#(String(repeating: "z", count: 9000))"}}]}"#, "events[0]"),
    ])
    func invalid(body: String, field: String) async throws {
        try await Harness().run { c in
            let r = try await c.call(.post, "/events", student: "ev", body: body)
            #expect(r.status == .badRequest && r.code == "VALIDATION_ERROR", "\(body.prefix(80))")
            #expect((r.details["field"] as? String)?.hasPrefix(field) == true, "\(r.details) for \(field)")
            let stored = try await c.call(.get, "/events", student: "ev")
            #expect(stored.body.isEmpty)
        }
    }

    @Test("events need a token")
    func auth() async throws {
        try await Harness().run { c in
            let r = try await c.call(.post, "/events", body: Self.batch)
            #expect(r.status == .unauthorized && r.code == "AUTH_REQUIRED")
        }
    }
}

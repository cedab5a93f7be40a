import Foundation
import HTTPTypes
import SwipeRank
import SwipeRankColleges
import SwipeRankServer
import SwipeRankStore
import Testing

@Suite struct GroupRouteTests {
    static let create = #"{"filter": {"state": ["MA"]}, "quorum_n": 2}"#

    /// Creates a group as `creator` and returns (session id, invite code).
    static func makeGroup(_ c: Harness.Client, _ creator: String, body: String = create) async throws -> (String, String) {
        let r = try await c.call(.post, "/groups", student: creator, body: body)
        #expect(r.status == .created, "\(String(decoding: r.body, as: UTF8.self))")
        let id = try #require(r.json["session_id"] as? String)
        #expect(r.headers[.location] == "/groups/\(id)")
        return (id, try #require(r.json["invite_code"] as? String))
    }

    static func options(_ c: Harness.Client, _ group: String, _ student: String, query: String = "count=5") async throws -> [String] {
        let r = try await c.call(.get, "/groups/\(group)/options?\(query)", student: student)
        #expect(r.status == .ok, "\(String(decoding: r.body, as: UTF8.self))")
        return (r.json["options"] as? [[String: Any]] ?? []).compactMap { $0["option_id"] as? String }
    }

    static func like(_ c: Harness.Client, _ group: String, _ student: String, id: String, option: String,
                     action: String = "like") async throws -> Reply {
        try await c.call(.post, "/groups/\(group)/likes", student: student,
                         body: #"{"like_id":"\#(id)","option_id":"\#(option)","action":"\#(action)"}"#)
    }

    @Test("create, join by code, one deck for all, match at the quorum, idempotent likes, close by the creator")
    func lifecycle() async throws {
        try await Harness().run { c in
            try await c.createStudent("ann")
            try await c.createStudent("bob")
            let (group, code) = try await Self.makeGroup(c, "ann")
            #expect(code.count == 9 && code.contains("-"))
            // Joining: case and dashes do not matter; twice is a conflict; bad codes are 404.
            let joined = try await c.call(.post, "/groups/join", student: "bob", body: #"{"invite_code":"\#(code.lowercased())"}"#)
            #expect(joined.status == .ok && (joined.json["participants"] as? [[String: Any]])?.count == 2)
            let again = try await c.call(.post, "/groups/join", student: "bob", body: #"{"invite_code":"\#(code)"}"#)
            #expect(again.status == .conflict && again.details["reason"] as? String == "already_joined")
            #expect(try await c.call(.post, "/groups/join", student: "bob", body: #"{"invite_code":"ZZZZ-ZZZZ"}"#).code == "NOT_FOUND")
            #expect(try await c.call(.post, "/groups/join", student: "bob", body: #"{"invite_code":"0000-0000"}"#).status == .notFound)
            // Everyone sees the same deck, of Massachusetts schools only.
            let annDeck = try await Self.options(c, group, "ann")
            let bobDeck = try await Self.options(c, group, "bob")
            #expect(annDeck.count == 5 && annDeck == bobDeck)
            let catalog = Fixtures.engine.matcher.catalog
            let state = catalog.textAttribute(named: "state")!
            #expect(annDeck.allSatisfy { catalog.textValues[state][catalog.row(of: $0)!] == "MA" })
            // Paging: after a pass, ann's next page starts after it; the cursor continues.
            #expect(try await Self.like(c, group, "ann", id: "a-pass", option: annDeck[0], action: "pass").status == .created)
            #expect(try await Self.options(c, group, "ann", query: "count=2") == Array(annDeck[1...2]))
            #expect(try await Self.options(c, group, "ann", query: "count=2&after=3") == Array(annDeck[3...4]))
            // The first like: no match yet. A replay: the same answer, marked. Another body: 409.
            let first = try await Self.like(c, group, "ann", id: "a1", option: annDeck[1])
            #expect(first.status == .created && first.json["success"] as? Bool == true && first.json["match_found"] as? Bool == false)
            #expect(first.json["matched_option_id"] is NSNull)
            let replay = try await Self.like(c, group, "ann", id: "a1", option: annDeck[1])
            #expect(replay.status == .ok && replay.headers[.init("Idempotent-Replayed")!] == "true" && replay.body == first.body)
            let reused = try await Self.like(c, group, "ann", id: "a1", option: annDeck[2])
            #expect(reused.status == .conflict && reused.code == "CONFLICT")
            let unknown = try await Self.like(c, group, "ann", id: "a9", option: "no-such-school")
            #expect(unknown.status == .conflict && unknown.details["reason"] as? String == "not_in_deck")
            // The quorum's like matches.
            let second = try await Self.like(c, group, "bob", id: "b1", option: annDeck[1])
            #expect(second.json["success"] as? Bool == true && second.json["match_found"] as? Bool == true)
            #expect(second.json["matched_option_id"] as? String == annDeck[1] && second.json["likes"] as? Int == 2)
            // A replay answers as the first time, even after the match (likes 1, no match yet).
            let replayLater = try await Self.like(c, group, "ann", id: "a1", option: annDeck[1])
            #expect(replayLater.status == .ok && replayLater.body == first.body, "\(String(decoding: replayLater.body, as: UTF8.self))")
            let after = try await Self.like(c, group, "bob", id: "b2", option: annDeck[2])
            #expect(after.json["success"] as? Bool == false && after.json["matched_option_id"] as? String == annDeck[1])
            let status = try await c.call(.get, "/groups/\(group)", student: "bob")
            #expect(status.json["status"] as? String == "matched" && status.json["matched_option_id"] as? String == annDeck[1])
            #expect((status.json["matched_option"] as? [String: Any])?["id"] as? String == annDeck[1])
            // Nobody joins a matched session; only the creator closes it.
            try await c.createStudent("cat")
            let late = try await c.call(.post, "/groups/join", student: "cat", body: #"{"invite_code":"\#(code)"}"#)
            #expect(late.status == .conflict && late.details["reason"] as? String == "closed")
            #expect(try await c.call(.post, "/groups/\(group)/close", student: "bob").code == "ACCESS_DENIED")
            let closed = try await c.call(.post, "/groups/\(group)/close", student: "ann")
            #expect(closed.status == .ok && closed.json["status"] as? String == "closed")
            #expect(try await Self.like(c, group, "ann", id: "a3", option: annDeck[3]).status == .conflict)
            // Lists: open sessions by default, all on request.
            #expect((try await c.call(.get, "/groups", student: "ann").json["sessions"] as? [Any])?.isEmpty == true)
            let all = try await c.call(.get, "/groups?status=all", student: "ann")
            #expect((all.json["sessions"] as? [[String: Any]])?.map { $0["session_id"] as? String } == [group])
            #expect(try await c.call(.get, "/groups?status=maybe", student: "ann").status == .badRequest)
        }
    }

    @Test("the deck is the members' models aggregated (reference: the engine directly), ranked after friends joined")
    func deckOrder() async throws {
        let other = Fixtures.profile.replacingOccurrences(of: "\"annual_budget\": 32000", with: "\"annual_budget\": 12000")
            .replacingOccurrences(of: "\"size_preference\": \"medium\"", with: "\"size_preference\": \"small\"")
        #expect(other != Fixtures.profile)
        try await Harness().run { c in
            try await c.createStudent("ann")
            #expect(try await c.call(.put, "/student/profile", student: "bob", body: other).status == .created)
            try await c.createStudent("eve")  // not a member: no say
            let (group, code) = try await Self.makeGroup(c, "ann", body: #"{"filter": {"state": ["MA"], "control": ["private_nonprofit"]}, "quorum_n": 2, "strategy": "least_misery"}"#)
            _ = try await c.call(.post, "/groups/join", student: "bob", body: #"{"invite_code":"\#(code)"}"#)
            let deck = try await Self.options(c, group, "ann", query: "count=12")
            // The reference: both members' cold-start scores, least misery over the filtered rows.
            let engine = Fixtures.engine
            let catalog = engine.matcher.catalog
            let state = catalog.textAttribute(named: "state")!, control = catalog.textAttribute(named: "control")!
            let rows = (0..<catalog.count).filter { catalog.textValues[state][$0] == "MA" && catalog.textValues[control][$0] == "private_nonprofit" }
            var scores: [[Double]] = []
            for profile in [Fixtures.profile, other] {
                let session = try engine.session(studentID: "x", profile: try SchoolMatcher.decodeProfile(json: Data(profile.utf8), source: "p"), seed: 1)
                var raw: [Float] = []
                catalog.scores(weights: session.weights, terms: session.student.terms, into: &raw)
                scores.append(raw.map(Double.init))
            }
            let expected = GroupAggregation(strategy: .leastMisery).rank(candidates: rows, memberScores: scores, count: 12).map { catalog.ids[$0] }
            #expect(deck == expected)
            let single = GroupAggregation(strategy: .leastMisery).rank(candidates: rows, memberScores: [scores[0]], count: 12).map { catalog.ids[$0] }
            #expect(deck != single)  // bob's taste changed the order
        }
    }

    @Test("errors: auth, membership, validation naming the field, unknown ids")
    func errors() async throws {
        try await Harness().run { c in
            try await c.createStudent("ann")
            #expect(try await c.call(.post, "/groups", body: Self.create).code == "AUTH_REQUIRED")
            let (group, _) = try await Self.makeGroup(c, "ann")
            #expect(try await c.call(.get, "/groups/\(group)", student: "eve").code == "ACCESS_DENIED")
            #expect(try await c.call(.get, "/groups/\(group)/options", student: "eve").code == "ACCESS_DENIED")
            #expect(try await c.call(.get, "/groups/nope", student: "ann").code == "NOT_FOUND")
            for (body, field) in [(#"{"quorum_n": 1}"#, "quorum_n"), (#"{"quorum_n": 2, "max_members": 40}"#, "max_members"),
                                  (#"{"quorum_n": 2, "filter": {"planet": ["Mars"]}}"#, "filter.planet"),
                                  (#"{"quorum_n": 2, "filter": {"state": ["XX"]}}"#, "filter"),
                                  (#"{"quorum_n": 2, "color": "red"}"#, "color"),
                                  (#"{"quorum_n": 2, "strategy": "dictator"}"#, "strategy")] {
                let r = try await c.call(.post, "/groups", student: "ann", body: body)
                #expect(r.status == .badRequest && r.code == "VALIDATION_ERROR", "\(body)")
                #expect((r.details["field"] as? String)?.contains(field) == true, "\(body): \(r.details)")
            }
            #expect(try await c.call(.post, "/groups/\(group)/likes", student: "ann",
                                     body: #"{"like_id":"bad id!","option_id":"x"}"#).code == "VALIDATION_ERROR")
            #expect(try await c.call(.get, "/groups/\(group)/options?count=0", student: "ann").status == .badRequest)
            #expect(try await c.call(.delete, "/groups/\(group)", student: "ann").status == .methodNotAllowed)
        }
    }

    @Test("joins are rate-limited per student")
    func joinLimit() async throws {
        try await Harness(configure: { $0.groups.joinsPerMinute = 3 }).run { c in
            for i in 0..<3 {
                #expect(try await c.call(.post, "/groups/join", student: "guesser", body: #"{"invite_code":"AAAA-AAA\#(i + 2)"}"#).status == .notFound)
            }
            let limited = try await c.call(.post, "/groups/join", student: "guesser", body: #"{"invite_code":"AAAA-AAAA"}"#)
            #expect(limited.status == .tooManyRequests && limited.code == "RATE_LIMITED" && limited.headers[.retryAfter] != nil)
        }
    }

    @Test("two last likes at once: one match, recorded once and announced once on the event stream")
    func racingLastLikes() async throws {
        try await Harness(configure: { $0.groups.keepAliveSeconds = 0.05 }).run { c in
            for s in ["ann", "bob", "cat"] { try await c.createStudent(s) }
            let (group, code) = try await Self.makeGroup(c, "ann")
            for s in ["bob", "cat"] {
                #expect(try await c.call(.post, "/groups/join", student: s, body: #"{"invite_code":"\#(code)"}"#).status == .ok)
            }
            let option = try #require(try await Self.options(c, group, "ann").first)
            #expect(try await Self.like(c, group, "ann", id: "a", option: option).json["match_found"] as? Bool == false)
            async let stream = c.call(.get, "/groups/\(group)/events", student: "cat")
            try await Task.sleep(for: .milliseconds(300))  // the stream subscribes; either order is checked below
            async let b = Self.like(c, group, "bob", id: "b", option: option)
            async let d = Self.like(c, group, "cat", id: "c", option: option)
            let replies = try await [b, d]
            #expect(replies.allSatisfy { $0.status == .created && $0.json["match_found"] as? Bool == true })
            #expect(replies.filter { $0.json["success"] as? Bool == true }.count == 1)
            let events = String(decoding: try await stream.body, as: UTF8.self)
            #expect(events.hasPrefix("id: "), "\(events)")
            let statusOpen = events.contains("event: status\ndata: {") && events.contains(#""status":"open""#)
            // Subscribed before the likes (300 ms is ample on the in-process router): the match is pushed, once.
            #expect(statusOpen, "\(events)")
            #expect(events.components(separatedBy: "event: matched\n").count == 2, "\(events)")
            // The event names the option and carries it, so the match screen needs no second request.
            #expect(events.contains(#"data: {"matched_option":{"#) && events.contains(#""id":"\#(option)""#))
            #expect(events.contains(#""matched_option_id":"\#(option)"}"#))
            #expect(try await c.call(.get, "/groups/\(group)", student: "ann").json["votes"] as? Int == 3)
        }
    }

    @Test("the event stream pushes joined and closed and then ends; a group of members without profiles still gets a deck")
    func stream() async throws {
        try await Harness().run { c in
            let (group, code) = try await Self.makeGroup(c, "zed")  // zed has no profile
            async let stream = c.call(.get, "/groups/\(group)/events", student: "zed")
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await c.call(.post, "/groups/join", student: "yan", body: #"{"invite_code":"\#(code)"}"#).status == .ok)
            #expect(try await Self.options(c, group, "yan", query: "count=10").count == 10)  // a random order
            #expect(try await c.call(.post, "/groups/\(group)/close", student: "zed").status == .ok)
            let reply = try await stream
            #expect(reply.headers[.contentType]?.hasPrefix("text/event-stream") == true)
            let events = String(decoding: reply.body, as: UTF8.self)
            let names = events.split(separator: "\n").filter { $0.hasPrefix("event: ") }.map { String($0.dropFirst(7)) }
            #expect(names == ["status", "joined", "closed"], "\(events)")
            #expect(events.contains(#"data: {"participants":2,"student_id":"yan"}"#))
            // A closed session's stream is its status, and ends at once.
            let after = String(decoding: try await c.call(.get, "/groups/\(group)/events", student: "zed").body, as: UTF8.self)
            #expect(after.hasPrefix("id: 4\nevent: status\n") && after.contains(#""status":"closed""#), "\(after)")
        }
    }

    @Test("erasing a student removes their id from shared sessions; their likes still count")
    func erasure() async throws {
        try await Harness().run { c in
            try await c.createStudent("ann")
            try await c.createStudent("bob")
            let (group, code) = try await Self.makeGroup(c, "ann", body: #"{"filter": {"state": ["MA"]}, "quorum_n": 2}"#)
            _ = try await c.call(.post, "/groups/join", student: "bob", body: #"{"invite_code":"\#(code)"}"#)
            let option = try #require(try await Self.options(c, group, "bob").first)
            _ = try await Self.like(c, group, "bob", id: "b", option: option)
            #expect(try await c.call(.delete, "/student", student: "bob").status == .noContent)
            let status = try await c.call(.get, "/groups/\(group)", student: "ann")
            let participants = status.json["participants"] as? [[String: Any]] ?? []
            #expect(participants.count == 2 && !participants.contains { $0["student_id"] as? String == "bob" })
            #expect(!String(decoding: status.body, as: UTF8.self).contains("\"bob\""))
            let opts = try await c.call(.get, "/groups/\(group)/options?count=1", student: "ann")
            #expect((opts.json["options"] as? [[String: Any]])?.first?["likes"] as? Int == 1)
        }
    }

    @Test("a group on SQLite survives a new server over the same file")
    func durable() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-groups-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("db.sqlite").path
        let box = Box()
        try await Harness(store: try SQLiteStore(path: path)).run { c in
            try await c.createStudent("ann")
            let (group, _) = try await Self.makeGroup(c, "ann")
            let deck = try await Self.options(c, group, "ann", query: "count=8")
            _ = try await Self.like(c, group, "ann", id: "a", option: deck[0])
            box.set(group, deck)
        }
        let (group, deck) = box.get()
        try await Harness(store: try SQLiteStore(path: path)).run { c in
            let next = try await Self.options(c, group, "ann", query: "count=7")
            #expect(next == Array(deck[1...7]))
            let replay = try await Self.like(c, group, "ann", id: "a", option: deck[0])
            #expect(replay.status == .ok)  // the replay is known
            let status = try await c.call(.get, "/groups/\(group)", student: "ann")
            #expect(status.json["votes"] as? Int == 1)
        }
    }

    final class Box: @unchecked Sendable {
        private var value: (String, [String]) = ("", [])
        private let lock = NSLock()
        func set(_ g: String, _ d: [String]) { lock.withLock { value = (g, d) } }
        func get() -> (String, [String]) { lock.withLock { value } }
    }
}

@Suite struct GroupRouteMethodTests {
    @Test("405 lists the methods of the most literal route: /groups/join is not /groups/:id")
    func allow() async throws {
        try await Harness().run { c in
            let join = try await c.call(.get, "/groups/join", student: "ann")
            #expect(join.status == .methodNotAllowed && join.headers[.allow] == "POST", "\(join.headers)")
            let group = try await c.call(.put, "/groups/some-id", student: "ann")
            #expect(group.status == .methodNotAllowed && group.headers[.allow] == "GET")
            let root = try await c.call(.delete, "/groups", student: "ann")
            #expect(root.headers[.allow] == "GET, POST")
        }
    }

    @Test("null filter, max_members and strategy mean the defaults")
    func nulls() async throws {
        try await Harness().run { c in
            let r = try await c.call(.post, "/groups", student: "ann", body: #"{"filter":null,"max_members":null,"strategy":null,"quorum_n":2}"#)
            #expect(r.status == .created && r.json["max_members"] as? Int == 12 && r.json["strategy"] as? String == "average_without_misery")
        }
    }
}

import Foundation
import HTTPTypes
import SwipeRank
import SwipeRankServer
import SwipeRankStore
import Testing

@Suite struct RouteTests {
    @Test("health, readiness, metrics; every response has X-Request-ID and X-API-Version")
    func health() async throws {
        try await Harness().run { c in
            for path in ["/health", "/health/live", "/health/ready"] {
                let r = try await c.call(.get, path)
                #expect(r.status == .ok)
                #expect(r.headers[.init("X-API-Version")!] == "1")
                #expect(r.headers[.init("X-Request-ID")!]?.isEmpty == false)
            }
            #expect(try await c.call(.get, "/health/ready").json["catalog_items"] as? Int == Fixtures.engine.matcher.catalog.count)
            let echoed = try await c.call(.get, "/health", headers: [.init("X-Request-ID")!: "abc-123"])
            #expect(echoed.headers[.init("X-Request-ID")!] == "abc-123")
            let replaced = try await c.call(.get, "/health", headers: [.init("X-Request-ID")!: "bad id with spaces"])
            #expect(replaced.headers[.init("X-Request-ID")!] != "bad id with spaces")
            let metrics = try await c.call(.get, "/metrics")
            let text = String(decoding: metrics.body, as: UTF8.self)
            #expect(text.contains("swiperank_http_request_duration_seconds_bucket"))
            #expect(text.contains(#"route="/health""#))
        }
    }

    @Test("auth: missing, malformed, badly signed, expired tokens are 401 envelopes")
    func auth() async throws {
        try await Harness().run { c in
            let none = try await c.call(.get, "/student/profile")
            #expect(none.status == .unauthorized && none.code == "AUTH_REQUIRED")
            #expect(none.headers[.wwwAuthenticate] == "Bearer")
            let basic = try await c.call(.get, "/student/profile", headers: [.authorization: "Basic abc"])
            #expect(basic.status == .unauthorized && basic.code == "AUTH_INVALID")
            let garbage = try await c.call(.get, "/student/profile", headers: [.authorization: "Bearer not.a.jwt"])
            #expect(garbage.code == "AUTH_INVALID")
            let other = try await AuthConfiguration(hmacSecret: "another-secret-another-secret-0123456").token(studentID: "a", lifetime: 60)
            let forged = try await c.call(.get, "/student/profile", headers: [.authorization: "Bearer \(other)"])
            #expect(forged.code == "AUTH_INVALID")
            #expect((forged.error["message"] as? String)?.contains("signature") == true)
            let expired = try await c.auth.token(studentID: "a", lifetime: -120)
            let late = try await c.call(.get, "/student/profile", headers: [.authorization: "Bearer \(expired)"])
            #expect(late.code == "AUTH_INVALID")
            #expect((late.error["message"] as? String)?.contains("expired") == true)
        }
    }

    @Test("unknown routes are 404 and wrong methods 405 with Allow, in the envelope")
    func routing() async throws {
        try await Harness().run { c in
            let missing = try await c.call(.get, "/nope")
            #expect(missing.status == .notFound && missing.code == "NOT_FOUND")
            #expect(missing.error["message"] != nil && missing.error["details"] != nil)
            let wrong = try await c.call(.delete, "/health")
            #expect(wrong.status == .methodNotAllowed && wrong.code == "METHOD_NOT_ALLOWED")
            #expect(wrong.headers[.allow] == "GET")
            let wrongStudent = try await c.call(.post, "/student/profile", student: "a", body: "{}")
            #expect(wrongStudent.status == .methodNotAllowed)
            #expect(wrongStudent.headers[.allow] == "GET, PATCH, PUT")
        }
    }

    @Test("profile: create 201, replace 200, merge patch, read back; errors name the field")
    func profile() async throws {
        try await Harness().run { c in
            let before = try await c.call(.get, "/student/recommendations", student: "p")
            #expect(before.status == .notFound && before.details["resource"] as? String == "profile")
            try await c.createStudent("p")
            let replaced = try await c.call(.put, "/student/profile", student: "p", body: Fixtures.profile)
            #expect(replaced.status == .ok)
            let patched = try await c.call(.patch, "/student/profile", student: "p", body: #"{"annual_budget": 50000, "sat": null}"#,
                                           contentType: "application/merge-patch+json")
            #expect(patched.status == .ok)
            let profile = try await c.call(.get, "/student/profile", student: "p").json["profile"] as? [String: Any]
            #expect(profile?["annual_budget"] as? Double == 50000)
            #expect(profile?["sat"] == nil || profile?["sat"] is NSNull)
            #expect(profile?["home_state"] as? String == "MA")
            // A merge patch may move one coordinate of the stored home; deleting a field the
            // profile does not have is a typo named by the error, not a silent no-op.
            let moved = try await c.call(.patch, "/student/profile", student: "p", body: #"{"home": {"latitude": 40.5}}"#,
                                         contentType: "application/merge-patch+json")
            #expect(moved.status == .ok)
            let home = (moved.json["profile"] as? [String: Any])?["home"] as? [String: Any]
            #expect(home?["latitude"] as? Double == 40.5 && home?["longitude"] as? Double == -71.0589)
            for (patch, field) in [(#"{"annual_budgett": null}"#, "annual_budgett"), (#"{"home": {"altitude": null}}"#, "home.altitude"),
                                   (#"{"sat": 1300, "home": {"latitude": null}}"#, "home.latitude")] {
                let typo = try await c.call(.patch, "/student/profile", student: "p", body: patch,
                                            contentType: "application/merge-patch+json")
                #expect(typo.status == .badRequest && typo.code == "VALIDATION_ERROR", "\(patch)")
                #expect(typo.details["field"] as? String == field, "\(patch)")
            }

            let range = try await c.call(.put, "/student/profile", student: "p", body: #"{"max_distance_miles": -5}"#)
            #expect(range.status == .badRequest && range.code == "VALIDATION_ERROR")
            #expect(range.details["field"] as? String == "max_distance_miles")
            let unknown = try await c.call(.put, "/student/profile", student: "p", body: #"{"annual_budgett": 5}"#)
            #expect(unknown.details["field"] as? String == "annual_budgett")
            let malformed = try await c.call(.put, "/student/profile", student: "p", body: "{\n  \"sat\": 1200,,\n}")
            #expect(malformed.code == "VALIDATION_ERROR")
            #expect(malformed.details["line"] as? Int == 2 && malformed.details["column"] != nil)
            let type = try await c.call(.put, "/student/profile", student: "p", body: Fixtures.profile, contentType: "text/plain")
            #expect(type.status == .unsupportedMediaType && type.code == "UNSUPPORTED_MEDIA_TYPE")
            let huge = try await c.call(.put, "/student/profile", student: "p", body: String(repeating: " ", count: 2 << 20) + "{}")
            #expect(huge.status == .contentTooLarge && huge.code == "PAYLOAD_TOO_LARGE")
            let empty = try await c.call(.put, "/student/profile", student: "p", body: nil)
            #expect(empty.status == .badRequest)
            // Nothing above changed the stored profile.
            let after = try await c.call(.get, "/student/profile", student: "p").json["profile"] as? [String: Any]
            #expect(after?["annual_budget"] as? Double == 50000)
            #expect(after?["sat"] == nil || after?["sat"] is NSNull)
            #expect((after?["home"] as? [String: Any])?["latitude"] as? Double == 40.5)
        }
    }

    @Test("recommendations: full, minimal and compressed shapes; decks and positions; no-store")
    func recommendations() async throws {
        try await Harness().run { c in
            try await c.createStudent("r")
            let full = try await c.call(.get, "/student/recommendations?count=5", student: "r")
            #expect(full.status == .ok)
            #expect(full.headers[.cacheControl] == "no-store")
            let cards = try #require(full.json["recommendations"] as? [[String: Any]])
            #expect(cards.count == 5)
            #expect(Set(cards[0].keys) == ["school", "match_score", "grade", "explanations", "is_probe", "matched_majors", "distance", "position"])
            #expect(cards.map { $0["position"] as? Int } == [1, 2, 3, 4, 5])
            #expect(cards[3]["is_probe"] as? Bool == true)  // every 4th card is a probe
            #expect(full.json["total_swipes"] as? Int == 0)
            #expect((full.json["learning_state"] as? [String: Any])?["phase"] as? String == "discovery")
            #expect(full.json["repeated"] as? Int == 0 && full.json["exhausted"] as? Bool == false)
            let deck1 = full.json["deck_id"] as? String
            let ids = cards.compactMap { ($0["school"] as? [String: Any])?["id"] as? String }
            // Retry-safe: asking again deals nothing new, the same cards come back (re-scored).
            let retry = try await c.call(.get, "/student/recommendations?count=5", student: "r")
            let again = try #require(retry.json["recommendations"] as? [[String: Any]])
            #expect(again.compactMap { ($0["school"] as? [String: Any])?["id"] as? String } == ids)
            #expect(again.map { $0["position"] as? Int } == [1, 2, 3, 4, 5] && retry.json["repeated"] as? Int == 5)
            #expect(retry.json["deck_id"] is NSNull)
            let minimal = try await c.call(.get, "/student/recommendations?count=8&fields=minimal", student: "r")
            let m = try #require(minimal.json["recommendations"] as? [[String: Any]])
            #expect(Set(m[0].keys) == ["school_id", "name", "match_score", "grade", "is_probe", "position"])
            #expect(m.map { $0["position"] as? Int } == [1, 2, 3, 4, 5, 6, 7, 8] && minimal.json["repeated"] as? Int == 5)
            #expect(minimal.json["deck_id"] as? String != deck1)
            // Played cards leave the deck; newly dealt cards are never ones served before.
            let dealt = m.compactMap { $0["school_id"] as? String }
            for (i, school) in dealt.enumerated() { #expect(try await c.swipe("r", id: "d\(i)", school: school, like: i % 2 == 0).status == .created) }
            let compressed = try await c.call(.get, "/student/recommendations?count=2&compressed=true", student: "r")
            let z = try #require(compressed.json["recommendations"] as? [[String: Any]])
            #expect(Set(z[0].keys) == ["i", "n", "l", "m", "img", "p", "q"])
            #expect((z[0]["l"] as? String)?.contains(", ") == true)
            #expect(z.compactMap { $0["p"] as? Int } == [9, 10] && compressed.json["repeated"] as? Int == 0)
            #expect(!Set(dealt).contains(z[0]["i"] as? String ?? ""))  // never the same card twice
            for bad in ["count=0", "count=51", "count=abc", "fields=all", "compressed=maybe"] {
                let r = try await c.call(.get, "/student/recommendations?\(bad)", student: "r")
                #expect(r.status == .badRequest && r.code == "VALIDATION_ERROR", "\(bad)")
                #expect(r.details["field"] as? String == String(bad.split(separator: "=")[0]))
            }
            let preload = try await c.call(.get, "/student/recommendations/preload?count=40", student: "r")
            #expect((preload.json["recommendations"] as? [Any])?.count == 40 && preload.json["preload"] as? Bool == true)
            #expect(preload.json["repeated"] as? Int == 2)
        }
    }

    @Test("swipes are idempotent: same id and body → same answer; other body → 409; bad swipes are typed errors")
    func swipes() async throws {
        try await Harness().run { c in
            try await c.createStudent("s")
            let deck = try await c.deck("s", count: 4)
            let first = try await c.swipe("s", id: "w1", school: deck[0], like: true)
            #expect(first.status == .created)
            #expect(first.json["total_swipes"] as? Int == 1 && first.json["outcome"] as? String == "recorded")
            let retry = try await c.swipe("s", id: "w1", school: deck[0], like: true)
            #expect(retry.status == .ok && retry.body == first.body)
            #expect(retry.headers[.init("Idempotent-Replayed")!] == "true")
            let clash = try await c.swipe("s", id: "w1", school: deck[0], like: false)
            #expect(clash.status == .conflict && clash.code == "CONFLICT")
            let again = try await c.swipe("s", id: "w2", school: deck[0], like: true)
            #expect(again.status == .conflict && again.details["reason"] as? String == "already_swiped")
            let unknown = try await c.swipe("s", id: "w3", school: "no-such-school", like: true)
            #expect(unknown.status == .notFound && unknown.details["field"] as? String == "school_id")
            // A card reached outside the deck (search, a detail page) is an organic swipe: learned
            // from, counted, never served afterwards, and only once.
            let unseen = Fixtures.engine.matcher.catalog.ids.first { !deck.contains($0) }!
            let organic = try await c.swipe("s", id: "w4", school: unseen, like: true)
            #expect(organic.status == .created && organic.json["organic"] as? Bool == true)
            #expect(organic.json["total_swipes"] as? Int == 2 && organic.json["feedback"] is NSNull)
            #expect(first.json["organic"] as? Bool == false)
            let twiceOrganic = try await c.swipe("s", id: "w5", school: unseen, like: false)
            #expect(twiceOrganic.status == .conflict && twiceOrganic.details["reason"] as? String == "already_swiped")
            #expect(try await c.swipe("s", id: "w4", school: unseen, like: true).headers[.init("Idempotent-Replayed")!] == "true")
            #expect(try await !c.deck("s", count: 50).contains(unseen))
            let badID = try await c.swipe("s", id: "has space", school: deck[1], like: true)
            #expect(badID.status == .badRequest && badID.details["field"] as? String == "swipe_id")
            let badAction = try await c.call(.post, "/student/swipe", student: "s",
                                             body: #"{"swipe_id":"w5","school_id":"\#(deck[1])","action":"maybe","timestamp":1}"#)
            #expect(badAction.status == .badRequest && badAction.details["field"] as? String == "action")
            // A body of the plain shape past the 16 KiB limit is refused, not read by the fast path.
            let padded = try await c.call(.post, "/student/swipe", student: "s",
                                          body: #"{"swipe_id":"w6","school_id":"\#(deck[1])","action":"like","timestamp":1}"#
                                              + String(repeating: " ", count: 16 << 10))
            #expect(padded.status == .badRequest && padded.code == "VALIDATION_ERROR")
            let state = try await c.call(.get, "/student/learning-state", student: "s")
            #expect(state.json["total_swipes"] as? Int == 2)  // one served card, one organic
            #expect(state.json["served_cards"] as? Int == 51)  // the first deck, then its 3 open cards and 47 new
        }
    }

    @Test("sync applies an offline queue in (timestamp, id) order with one result per swipe; GET sync catches up")
    func sync() async throws {
        try await Harness().run { c in
            try await c.createStudent("y")
            let deck = try await c.deck("y", count: 6)
            let body = """
                {"swipes": [
                  {"swipe_id": "c", "school_id": "\(deck[2])", "action": "like", "timestamp": 30},
                  {"swipe_id": "a", "school_id": "\(deck[0])", "action": "dislike", "timestamp": 10},
                  {"swipe_id": "b", "school_id": "no-such", "action": "like", "timestamp": 20},
                  {"swipe_id": "d", "school_id": "\(deck[0])", "action": "like", "timestamp": 40},
                  {"swipe_id": "a", "school_id": "\(deck[0])", "action": "dislike", "timestamp": 10}
                ]}
                """
            let r = try await c.call(.post, "/student/sync", student: "y", body: body)
            #expect(r.status == .ok)
            let results = try #require(r.json["results"] as? [[String: Any]])
            #expect(results.map { $0["swipe_id"] as? String } == ["c", "a", "b", "d", "a"])
            #expect(results.map { $0["status"] as? Int } == [200, 200, 404, 409, 200])
            // a (t=10) was applied first, c (t=30) second.
            #expect(((results[1]["result"] as? [String: Any])?["total_swipes"] as? Int) == 1)
            #expect(((results[0]["result"] as? [String: Any])?["total_swipes"] as? Int) == 2)
            #expect(r.json["total_swipes"] as? Int == 2)
            // Sending the queue again changes nothing.
            let again = try await c.call(.post, "/student/sync", student: "y", body: body)
            #expect(again.json["total_swipes"] as? Int == 2)
            // A second device catches up from cursor 0, then from the returned cursor.
            let changes = try await c.call(.get, "/student/sync?since=0", student: "y")
            let events = try #require(changes.json["events"] as? [[String: Any]])
            #expect(events.map { $0["kind"] as? String } == ["profile", "served", "swipe", "swipe"])
            let cursor = try #require(changes.json["cursor"] as? Int)
            #expect(changes.json["has_more"] as? Bool == false)
            let none = try await c.call(.get, "/student/sync?since=\(cursor)", student: "y")
            #expect((none.json["events"] as? [Any])?.isEmpty == true)
            let tooMany = try await c.call(.post, "/student/sync", student: "y", body: #"{"swipes": \#(Array(repeating: #"{"swipe_id":"x","school_id":"y","action":"like","timestamp":1}"#, count: 501))}"#.replacingOccurrences(of: "\"[", with: "[").replacingOccurrences(of: "]\"", with: "]"))
            #expect(tooMany.status == .badRequest)
        }
    }

    @Test("feedback answers an open question once; saves teach, are idempotent and leave the deck")
    func feedbackAndSaves() async throws {
        try await Harness().run { c in
            try await c.createStudent("f")
            // Swipe until a probe asks a question.
            var question: [String: Any]?
            var step = 0
            while question == nil && step < 40 {
                let deck = try await c.deck("f", count: 4)
                for school in deck {
                    step += 1
                    let r = try await c.swipe("f", id: "q\(step)", school: school, like: step % 3 == 0, at: Int64(step))
                    if let f = r.json["feedback"] as? [String: Any] { question = f; break }
                }
            }
            let q = try #require(question)
            let card = try #require(q["card_id"] as? String)
            // Each option a stable code and its English label.
            let offered = try #require(q["options"] as? [[String: String]])
            let options = offered.compactMap { $0["code"] }
            #expect(options.count == offered.count && !options.isEmpty)
            for option in offered {
                let known = try #require(FeedbackOption(codeOrLabel: option["code"] ?? ""))
                #expect(option["label"] == known.label && option["code"] == known.code)
            }
            let notOffered = FeedbackOption.allCases.map(\.code).first { !options.contains($0) }
            if let notOffered {
                let wrong = try await c.call(.post, "/student/feedback", student: "f",
                                             body: #"{"school_id":"\#(card)","options":["\#(notOffered)"]}"#)
                #expect(wrong.status == .badRequest && wrong.details["field"] as? String == "options")
            }
            // A code that is no option: named with its position and the codes there are, not a decoder dump.
            let unknown = try await c.call(.post, "/student/feedback", student: "f",
                                           body: #"{"school_id":"\#(card)","options":["\#(options[0])","too_pricey"]}"#)
            #expect(unknown.status == .badRequest && unknown.details["field"] as? String == "options[1]")
            #expect((unknown.error["message"] as? String)?.contains("\"too_pricey\" is not a feedback option; use one of too_expensive") == true)
            let answer = try await c.call(.post, "/student/feedback", student: "f", body: #"{"school_id":"\#(card)","options":["\#(options[0])"]}"#)
            #expect(answer.status == .ok)
            let twice = try await c.call(.post, "/student/feedback", student: "f", body: #"{"school_id":"\#(card)","options":[]}"#)
            #expect(twice.status == .conflict)

            let target = Fixtures.engine.matcher.catalog.ids[1234]
            let detail = try await c.call(.get, "/student/schools/\(target)?fields=minimal", student: "f")
            #expect(detail.status == .ok && detail.json["school_id"] as? String == target)
            #expect(detail.headers[.cacheControl] == "private, no-cache")
            let saved = try await c.call(.post, "/student/schools/\(target)/save", student: "f")
            #expect(saved.status == .created && saved.json["saved"] as? Bool == true)
            let total = saved.json["total_swipes"] as? Int
            let savedAgain = try await c.call(.post, "/student/schools/\(target)/save", student: "f")
            #expect(savedAgain.status == .ok && savedAgain.body == saved.body)
            let after = try await c.call(.get, "/student/schools/\(target)?fields=minimal", student: "f")
            #expect((after.json["match_score"] as? Double ?? 0) > (detail.json["match_score"] as? Double ?? 1))
            let list = try await c.call(.get, "/student/saved?fields=minimal", student: "f")
            #expect((list.json["saved"] as? [[String: Any]])?.first?["school_id"] as? String == target)
            let preload = try await c.call(.get, "/student/recommendations/preload?count=200&fields=minimal", student: "f")
            let ids = (preload.json["recommendations"] as? [[String: Any]] ?? []).compactMap { $0["school_id"] as? String }
            #expect(ids.count == 200 && !ids.contains(target))
            #expect(try await c.call(.get, "/student/learning-state", student: "f").json["total_swipes"] as? Int == total)
            let nope = try await c.call(.post, "/student/schools/no-such/save", student: "f")
            #expect(nope.status == .notFound)
            let publicSchool = try await c.call(.get, "/schools/\(target)")
            #expect(publicSchool.status == .ok && publicSchool.headers[.cacheControl] == "public, max-age=3600")
            let etag = try #require(publicSchool.headers[.eTag])
            #expect(try await c.call(.get, "/schools/\(target)", headers: [.ifNoneMatch: etag]).status == .notModified)
        }
    }

    @Test("batch runs operations in order with their own statuses; export and erase")
    func batchExportErase() async throws {
        try await Harness().run { c in
            let batch = """
                {"operations": [
                  {"method": "PUT", "path": "/student/profile", "body": \(Fixtures.profile)},
                  {"method": "GET", "path": "/student/recommendations?count=2&fields=minimal"},
                  {"method": "GET", "path": "/student/nope"},
                  {"method": "GET", "path": "/student/learning-state"}
                ]}
                """
            let r = try await c.call(.post, "/student/batch", student: "b", body: batch)
            #expect(r.status == .ok)
            let results = try #require(r.json["results"] as? [[String: Any]])
            #expect(results.map { $0["status"] as? Int } == [201, 200, 404, 200])
            #expect(((results[3]["body"] as? [String: Any])?["served_cards"] as? Int) == 2)
            let nested = try await c.call(.post, "/student/batch", student: "b", body: #"{"operations":[{"method":"POST","path":"/student/batch"}]}"#)
            #expect(nested.status == .badRequest && nested.details["field"] as? String == "operations[0].path")
            let outside = try await c.call(.post, "/student/batch", student: "b", body: #"{"operations":[{"method":"GET","path":"/health"}]}"#)
            #expect(outside.status == .badRequest)
            let odd = try await c.call(.post, "/student/batch", student: "b", body: #"{"operations":[{"method":"GET","path":"/student/J*"}]}"#)
            #expect(odd.status == .badRequest && odd.details["field"] as? String == "operations[0].path")

            let export = try await c.call(.get, "/student/export", student: "b")
            #expect(export.json["student_id"] as? String == "b")
            #expect((export.json["events"] as? [[String: Any]])?.map { $0["kind"] as? String } == ["profile", "served"])
            #expect(try await c.call(.delete, "/student", student: "b").status == .noContent)
            #expect(try await c.call(.get, "/student/profile", student: "b").status == .notFound)
            #expect(try await c.call(.delete, "/student", student: "b").status == .notFound)
            // Another student's state was never reachable: "a" has none of "b"'s.
            #expect(try await c.call(.get, "/student/export", student: "a").status == .notFound)
        }
    }

    @Test("rate limit: the request past the bucket is 429 with Retry-After")
    func rateLimit() async throws {
        try await Harness(configure: { $0.rateLimitPerHour = 3 }).run { c in
            for i in 0..<3 {
                let r = try await c.call(.get, "/student/profile", student: "rl")
                #expect(r.headers[.init("X-RateLimit-Remaining")!] == String(2 - i))
            }
            let limited = try await c.call(.get, "/student/profile", student: "rl")
            #expect(limited.status == .tooManyRequests && limited.code == "RATE_LIMITED")
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            #expect(limited.headers[.init("X-RateLimit-Remaining")!] == "0")
            // Another student has a bucket of their own; an error answer counts and says so, and
            // every answer (an error's too) carries the request's id and the API version.
            let missing = try await c.call(.get, "/student/profile", student: "other")
            #expect(missing.status == .notFound && missing.code == "NOT_FOUND")
            #expect(missing.headers[.init("X-RateLimit-Remaining")!] == "2" && missing.headers[.init("X-RateLimit-Limit")!] == "3")
            for answer in [limited, missing] {
                #expect(answer.headers[.init("X-Request-ID")!]?.count == 36 && answer.headers[.init("X-API-Version")!] == "1")
            }
        }
    }
}

/// A store whose every call fails, as a lost disk or database would.
final class FailingStore: StudentStore {
    func student(_ studentID: String) async throws(StoreError) -> StudentRecord? { throw StoreError("disk /var/secret.db gone") }
    func events(of studentID: String, after: Int, kinds: Set<EventKind>?, limit: Int) async throws(StoreError) -> [StoredEvent] {
        throw StoreError("disk /var/secret.db gone")
    }
    func event(of studentID: String, kind: EventKind, clientID: String) async throws(StoreError) -> StoredEvent? {
        throw StoreError("disk /var/secret.db gone")
    }
    func append(_ events: [StoredEvent], to studentID: String, expectedVersion: Int, update: StudentUpdate) async throws(StoreError) -> AppendOutcome {
        throw StoreError("disk /var/secret.db gone")
    }
    func saveSnapshot(_ data: Data, for studentID: String, version: Int, createdAt: Int64) async throws(StoreError) -> Bool {
        throw StoreError("disk /var/secret.db gone")
    }
    func deleteStudent(_ studentID: String) async throws(StoreError) -> Bool { throw StoreError("disk /var/secret.db gone") }
    func ping() async throws(StoreError) { throw StoreError("disk /var/secret.db gone") }
}

extension FailingStore: AppEventLog {
    func appendAppEvents(_ events: [AppEvent], for studentID: String) async throws(StoreError) -> Int { throw StoreError("disk /var/secret.db gone") }
    func appEvents(of studentID: String, after: Int, limit: Int) async throws(StoreError) -> [AppEvent] { throw StoreError("disk /var/secret.db gone") }
    func purgeAppEvents(receivedBefore time: Int64) async throws(StoreError) -> Int { throw StoreError("disk /var/secret.db gone") }
    func studentIDs(after: String?, limit: Int) async throws(StoreError) -> [String] { throw StoreError("disk /var/secret.db gone") }
}

extension FailingStore: CatalogLog {
    func catalogSequence() async throws(StoreError) -> Int { throw StoreError("disk /var/secret.db gone") }
    func catalogChanges(after: Int, limit: Int) async throws(StoreError) -> [CatalogChange] { throw StoreError("disk /var/secret.db gone") }
    func appendCatalogChanges(_ changes: [CatalogChange], expectedSequence: Int) async throws(StoreError) -> Int? {
        throw StoreError("disk /var/secret.db gone")
    }
}

extension FailingStore: GroupStore {
    func createGroup(_ group: GroupRecord) async throws(StoreError) -> Bool { throw StoreError("disk /var/secret.db gone") }
    func group(_ groupID: String) async throws(StoreError) -> GroupRecord? { throw StoreError("disk /var/secret.db gone") }
    func group(inviteCode: String) async throws(StoreError) -> GroupRecord? { throw StoreError("disk /var/secret.db gone") }
    func updateGroup(_ group: GroupRecord, expectedVersion: Int) async throws(StoreError) -> AppendOutcome {
        throw StoreError("disk /var/secret.db gone")
    }
    func groups(ofMember studentID: String, status: String?, limit: Int) async throws(StoreError) -> [GroupRecord] {
        throw StoreError("disk /var/secret.db gone")
    }
}

extension FailingStore: WebhookOutbox {
    func updateGroup(_ group: GroupRecord, expectedVersion: Int, enqueuing deliveries: [WebhookDelivery]) async throws(StoreError)
        -> AppendOutcome {
        throw StoreError("disk /var/secret.db gone")
    }
    func claimWebhookDeliveries(now: Int64, leaseUntil: Int64, limit: Int) async throws(StoreError) -> [WebhookDelivery] {
        throw StoreError("disk /var/secret.db gone")
    }
    func recordWebhookAttempt(_ delivery: WebhookDelivery) async throws(StoreError) { throw StoreError("disk /var/secret.db gone") }
    func webhookDeliveries(status: WebhookDelivery.Status?, limit: Int) async throws(StoreError) -> [WebhookDelivery] {
        throw StoreError("disk /var/secret.db gone")
    }
}

extension FailingStore: ModelRegistry {
    func latestModelVersion(kind: String) async throws(StoreError) -> Int { throw StoreError("disk /var/secret.db gone") }
    func latestModel(kind: String) async throws(StoreError) -> StoredModel? { throw StoreError("disk /var/secret.db gone") }
    func putModel(kind: String, data: Data, createdAt: Int64) async throws(StoreError) -> Int { throw StoreError("disk /var/secret.db gone") }
    func withExclusiveJob<T: Sendable>(_ name: String, _ body: @Sendable () async throws -> T) async throws -> T? {
        throw StoreError("disk /var/secret.db gone")
    }
}

@Suite struct StoreFailureTests {
    @Test("a failing store: 503 not ready, 500 SERVER_ERROR with the request id and nothing internal")
    func failingStore() async throws {
        try await Harness(store: FailingStore()).run { c in
            #expect(try await c.call(.get, "/health/live").status == .ok)
            let ready = try await c.call(.get, "/health/ready")
            #expect(ready.status == .serviceUnavailable && ready.json["store"] as? String == "unreachable")
            for (method, path, body) in [(HTTPRequest.Method.get, "/student/profile", nil as String?),
                                         (.put, "/student/profile", Fixtures.profile),
                                         (.get, "/student/recommendations", nil)] {
                let r = try await c.call(method, path, student: "x", body: body, headers: [.init("X-Request-ID")!: "req-42"])
                #expect(r.status == .internalServerError && r.code == "SERVER_ERROR", "\(path)")
                #expect(r.details["request_id"] as? String == "req-42")
                #expect(!String(decoding: r.body, as: UTF8.self).contains("secret"))
            }
        }
    }
}

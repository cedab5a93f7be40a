import Foundation
import HTTPTypes
import Synchronization
import Testing

/// The app's contract byte for byte: each response body of a fixed session (fixed clock, the
/// shipped catalog, deterministic engine) equals a file in `Golden/`. A change to a response
/// shape, a key, a number's formatting or the engine's choices fails here and shows the diff.
/// After an intended change, regenerate with `SWIPERANK_GOLDEN=update swift test --filter GoldenTests`
/// and review the diff of `Golden/` like code.
@Suite("Golden response bodies")
struct GoldenTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
    static let update = ProcessInfo.processInfo.environment["SWIPERANK_GOLDEN"] == "update"

    /// Compares (or, in update mode, writes) one body; returns whether it matched.
    static func check(_ name: String, _ reply: Reply, status: HTTPResponse.Status) {
        #expect(reply.status == status, "\(name): \(String(decoding: reply.body, as: UTF8.self))")
        let url = folder.appendingPathComponent("\(name).json")
        let actual = String(decoding: reply.body, as: UTF8.self) + "\n"
        if update {
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try? actual.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
            Issue.record("missing golden file Golden/\(name).json: run with SWIPERANK_GOLDEN=update and review it")
            return
        }
        if actual != expected {
            // Name the first differing byte so a long one-line body is readable in the log.
            let a = Array(actual.utf8), e = Array(expected.utf8)
            let at = (0..<min(a.count, e.count)).first { a[$0] != e[$0] } ?? min(a.count, e.count)
            let context = { (bytes: [UInt8]) in String(decoding: bytes[max(0, at - 60)..<min(bytes.count, at + 60)], as: UTF8.self) }
            Issue.record("Golden/\(name).json differs at byte \(at):\n  expected …\(context(e))…\n  actual   …\(context(a))…")
        }
    }

    @Test("every response shape the app consumes matches its golden file")
    func responses() async throws {
        try await Harness().run { c in
            let s = "golden-student"
            Self.check("profile-created", try await c.call(.put, "/student/profile", student: s, body: Fixtures.profile), status: .created)
            Self.check("profile", try await c.call(.get, "/student/profile", student: s), status: .ok)
            let full = try await c.call(.get, "/student/recommendations?count=3", student: s)
            Self.check("recommendations-full", full, status: .ok)
            Self.check("recommendations-minimal", try await c.call(.get, "/student/recommendations?count=3&fields=minimal", student: s), status: .ok)
            Self.check("recommendations-compressed", try await c.call(.get, "/student/recommendations?count=3&compressed=true", student: s), status: .ok)
            Self.check("preload", try await c.call(.get, "/student/recommendations/preload?count=2&fields=minimal", student: s), status: .ok)
            let first = (full.json["recommendations"] as? [[String: Any]])?.first?["school"] as? [String: Any]
            let school = try #require(first?["id"] as? String)
            Self.check("swipe", try await c.swipe(s, id: "g-1", school: school, like: true, at: 1_700_000_000_001), status: .created)
            Self.check("learning-state", try await c.call(.get, "/student/learning-state", student: s), status: .ok)
            let deck = try await c.deck(s, count: 4)
            Self.check("save", try await c.call(.post, "/student/schools/\(deck[0])/save", student: s), status: .created)
            Self.check("saved", try await c.call(.get, "/student/saved", student: s), status: .ok)
            Self.check("school-full", try await c.call(.get, "/student/schools/\(deck[1])?fields=full", student: s), status: .ok)
            Self.check("school-minimal", try await c.call(.get, "/student/schools/\(deck[1])?fields=minimal", student: s), status: .ok)
            Self.check("public-school", try await c.call(.get, "/schools/\(deck[1])"), status: .ok)
            let sync = #"{"swipes":[{"swipe_id":"g-3","school_id":"\#(deck[3])","action":"like","timestamp":1700000000003},"# +
                #"{"swipe_id":"g-2","school_id":"\#(deck[2])","action":"dislike","timestamp":1700000000002},"# +
                #"{"swipe_id":"g-4","school_id":"no-such-school","action":"like","timestamp":1700000000004}]}"#
            Self.check("sync-post", try await c.call(.post, "/student/sync", student: s, body: sync), status: .ok)
            Self.check("sync-get", try await c.call(.get, "/student/sync?since=2", student: s), status: .ok)
            Self.check("batch", try await c.call(.post, "/student/batch", student: s, body: """
                {"operations":[{"method":"GET","path":"/student/learning-state"},{"method":"GET","path":"/student/nowhere"}]}
                """), status: .ok)
            // Errors: the envelope and its details.
            Self.check("error-auth-required", try await c.call(.get, "/student/profile"), status: .unauthorized)
            Self.check("error-not-found", try await c.call(.get, "/nowhere", student: s), status: .notFound)
            Self.check("error-validation-json", try await c.call(.post, "/student/swipe", student: s, body: "{\"swipe_id\": }"), status: .badRequest)
            Self.check("error-validation-field", try await c.call(.patch, "/student/profile", student: s, body: #"{"sat": 9999}"#), status: .badRequest)
            Self.check("error-conflict", try await c.swipe(s, id: "g-1", school: school, like: false, at: 1_700_000_000_001), status: .conflict)
        }
    }

    @Test("the group responses match their golden files (seeded ids and codes)")
    func groups() async throws {
        let counter = Counter()
        try await Harness(configure: { config in
            config.groups.random = { counter.next() }
        }).run { c in
            for s in ["golden-a", "golden-b"] { try await c.createStudent(s) }
            let created = try await c.call(.post, "/groups", student: "golden-a", body: #"{"filter":{"state":["MA"]},"quorum_n":2}"#)
            Self.check("group-created", created, status: .created)
            let id = try #require(created.json["session_id"] as? String)
            let code = try #require(created.json["invite_code"] as? String)
            Self.check("group-joined", try await c.call(.post, "/groups/join", student: "golden-b", body: #"{"invite_code":"\#(code)"}"#), status: .ok)
            let options = try await c.call(.get, "/groups/\(id)/options?count=2", student: "golden-b")
            Self.check("group-options", options, status: .ok)
            let option = try #require((options.json["options"] as? [[String: Any]])?.first?["option_id"] as? String)
            let like = #"{"like_id":"l-1","option_id":"\#(option)"}"#
            Self.check("group-like", try await c.call(.post, "/groups/\(id)/likes", student: "golden-a", body: like), status: .created)
            Self.check("group-match", try await c.call(.post, "/groups/\(id)/likes", student: "golden-b", body: like), status: .created)
            Self.check("group-status", try await c.call(.get, "/groups/\(id)", student: "golden-a"), status: .ok)
            Self.check("group-list", try await c.call(.get, "/groups?status=all", student: "golden-b"), status: .ok)
        }
    }
}

/// A deterministic stand-in for the service's randomness.
final class Counter: Sendable {
    private let value = Mutex<UInt64>(0x5EED)
    func next() -> UInt64 { value.withLock { $0 = $0 &* 6364136223846793005 &+ 1442695040888963407; return $0 } }
}

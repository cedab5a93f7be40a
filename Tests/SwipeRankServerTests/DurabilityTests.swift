import Foundation
import HTTPTypes
import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics
@testable import SwipeRankServer
import SwipeRankStore
import Testing

/// The store is the truth: a new server over the same file (an empty cache) continues exactly
/// where the old one stopped, and both match the engine driven directly (the reference).
@Suite struct DurabilityTests {
    static func tempDatabase() throws -> (String, URL) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return (dir.appendingPathComponent("db.sqlite").path, dir)
    }

    @Test("HTTP session = engine session; a restarted server serves the very next cards", arguments: [(UInt64(1), 4, 0.125), (UInt64(2), 1_000, 0.125), (UInt64(3), 2, 0.5)])
    func restartMatchesReference(seed: UInt64, snapshotInterval: Int, snapshotSpacing: Double) async throws {
        let (path, dir) = try Self.tempDatabase()
        defer { try? FileManager.default.removeItem(at: dir) }
        let student = "ref-\(seed)"
        let profile = try StudentProfile.decode(json: Data(Fixtures.profile.utf8), source: "fixture")
        // The reference: the engine alone, with the service's seed for the first profile version.
        let service = StudentService(engine: Fixtures.engine, store: MemoryStore(), options: ServiceOptions(), logger: .init(label: "t"))
        let box = ReferenceBox(session: try Fixtures.engine.session(studentID: student, profile: profile, seed: service.seed(student, 1)),
                               rng: SplitMix64(seed: seed))
        let harness = Harness(store: try SQLiteStore(path: path), configure: {
            $0.service.snapshotInterval = snapshotInterval
            $0.service.snapshotSpacing = snapshotSpacing
        })
        try await harness.run { c in
            try await c.createStudent(student)
            for round in 0..<6 {
                let deck = try await c.deck(student, count: 5)
                let expected = box.session.deck(count: 5).ids
                #expect(deck == expected, "round \(round)")
                for (i, school) in deck.enumerated() where box.rng.next() % 5 != 0 {
                    let like = box.rng.next() % 2 == 0
                    let r = try await c.swipe(student, id: "r\(round)-\(i)", school: school, like: like, at: Int64(round * 10 + i))
                    #expect(r.status == .created)
                    _ = try box.session.recordSwipe(Swipe(swipeID: "r\(round)-\(i)", cardID: school, action: like ? .like : .dislike,
                                                          timestamp: Int64(round * 10 + i)))
                    #expect(r.json["total_swipes"] as? Int == box.session.totalSwipes)
                }
                if round == 2 {
                    let target = Fixtures.engine.matcher.catalog.ids[Int(box.rng.next() % 2_000)]
                    let saved = try await c.call(.post, "/student/schools/\(target)/save", student: student, body: #"{"timestamp": 5}"#)
                    #expect(saved.status == .created)
                    _ = try box.session.recordJudgement(Swipe(swipeID: "/save/\(target)", cardID: target, action: .like, timestamp: 5),
                                                        weight: 2)
                }
            }
        }
        let expectedNext = box.session.deck(count: 7).ids
        // Snapshots were written after the requests that made them due (the harness waited for
        // them): with a short interval the rebuild below starts from one, and it is a snapshot
        // of this student's session that restores.
        let stored = try #require(try await SQLiteStore(path: path).student(student))
        if snapshotInterval < 100 {
            #expect(stored.snapshotVersion > stored.profileVersion, "a snapshot after the profile: \(stored.snapshotVersion)")
            let snapshot = try SessionSnapshot<StudentProfile>.decode(json: try #require(stored.snapshot), source: "stored")
            let restored = try Fixtures.engine.restore(snapshot)
            #expect(snapshot.studentID == student && restored.totalSwipes > 0)
        }
        // A new server over the same file: nothing cached, everything rebuilt from the log.
        try await Harness(store: try SQLiteStore(path: path)).run { c in
            let next = try await c.deck(student, count: 7)
            #expect(next == expectedNext)
        }
    }

    @Test("snapshot policy: due after the interval (plus the stagger) once the history grew by the spacing fraction; bounded work and replay",
          arguments: [(32, 0.125, 0), (32, 0.125, 15), (4, 0.5, 1), (10, 0.0, 0), (10, 0.0, 4)])
    func snapshotPolicy(interval: Int, spacing: Double, stagger: Int) {
        var options = ServiceOptions()
        options.snapshotInterval = interval
        options.snapshotSpacing = spacing
        // A seeded history: decks of 10 cards, preloads of 200, swipes (each adds one entry).
        var rng = SplitMix64(seed: 7)
        var history = 0, atLast = 0, since = 0, written = 0, count = 0, events = 0
        for _ in 0..<50_000 {
            let r = rng.next() % 100
            history += r < 2 ? 200 : r < 20 ? 10 : 1
            events += 1
            since += 1
            let grown = Double(history - atLast) >= spacing * Double(history)
            let due = options.snapshotDue(eventsSince: since, historySize: history, historyAtLast: atLast, stagger: stagger)
            #expect(due == (since >= interval + stagger && grown))
            // Replay after a restore stays short: never more events than the interval and the
            // stagger plus the spacing's share of the history (each event adds at least one entry).
            #expect(since <= interval + stagger + Int((spacing * Double(history)).rounded(.up)))
            if due {
                written += history
                count += 1
                atLast = history
                since = 0
            }
        }
        if spacing > 0 {
            // A snapshot of history H comes after the history grew by ≥ spacing × H, so all
            // snapshots together hold at most history / spacing entries.
            #expect(Double(written) <= Double(history) / spacing)
            #expect(count > 10)
        } else {
            #expect(count == events / (interval + stagger))
        }
    }

    @Test("snapshot stagger: fixed per student, below half the interval, spread over it")
    func snapshotStagger() {
        var options = ServiceOptions()
        options.snapshotInterval = 32
        let staggers = (0..<1_000).map { options.snapshotStagger(for: "load-\($0)") }
        #expect(staggers.allSatisfy { (0..<16).contains($0) })
        #expect(staggers == (0..<1_000).map { options.snapshotStagger(for: "load-\($0)") })
        // Every value taken by 1,000 ids, none by more than a tenth of them.
        let counts = Dictionary(grouping: staggers, by: { $0 }).mapValues(\.count)
        #expect(counts.count == 16 && counts.values.allSatisfy { $0 < 100 }, "\(counts)")
        options.snapshotInterval = 1
        #expect(options.snapshotStagger(for: "x") == 0)
    }

    @Test("concurrent swipes of one student are serialized: none lost")
    func concurrentSwipes() async throws {
        let (path, dir) = try Self.tempDatabase()
        defer { try? FileManager.default.removeItem(at: dir) }
        try await Harness(store: try SQLiteStore(path: path)).run { c in
            try await c.createStudent("cc")
            try await c.createStudent("dd")
            let deckC = try await c.deck("cc", count: 24)
            let deckD = try await c.deck("dd", count: 24)
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for (i, school) in deckC.enumerated() {
                    group.addTask { try await c.swipe("cc", id: "c\(i)", school: school, like: i % 2 == 0, at: Int64(i)).status }
                    group.addTask { try await c.swipe("dd", id: "d\(i)", school: deckD[i], like: i % 3 == 0, at: Int64(i)).status }
                    // The same swipe twice at once: exactly one records it.
                    group.addTask { try await c.swipe("cc", id: "c\(i)", school: school, like: i % 2 == 0, at: Int64(i)).status }
                }
                var out: [HTTPResponse.Status] = []
                for try await s in group { out.append(s) }
                return out
            }
            #expect(statuses.filter { $0 == .created }.count == 48)
            #expect(statuses.filter { $0 == .ok }.count == 24)
            #expect(try await c.call(.get, "/student/learning-state", student: "cc").json["total_swipes"] as? Int == 24)
            #expect(try await c.call(.get, "/student/learning-state", student: "dd").json["total_swipes"] as? Int == 24)
        }
        try await Harness(store: try SQLiteStore(path: path)).run { c in
            let state = try await c.call(.get, "/student/learning-state", student: "cc")
            #expect(state.json["total_swipes"] as? Int == 24)
        }
    }

    @Test("a new profile keeps every past swipe and save as evidence and never re-serves them")
    func profileChangeCarriesOver() async throws {
        try await Harness().run { c in
            try await c.createStudent("pc")
            let deck = try await c.deck("pc", count: 8)
            for (i, school) in deck.enumerated() { _ = try await c.swipe("pc", id: "p\(i)", school: school, like: i < 4) }
            let r = try await c.call(.patch, "/student/profile", student: "pc", body: #"{"max_distance_miles": 1000}"#)
            #expect(r.status == .ok)
            let state = try await c.call(.get, "/student/learning-state", student: "pc")
            #expect(state.json["total_swipes"] as? Int == 8)
            let next = try await c.deck("pc", count: 50)
            #expect(Set(next).isDisjoint(with: deck))
        }
    }
}

/// The reference session shared with the (Sendable) test closure; used from one task at a time.
final class ReferenceBox: @unchecked Sendable {
    var session: SwipeSession<SchoolMatcher>
    var rng: SplitMix64
    init(session: SwipeSession<SchoolMatcher>, rng: SplitMix64) {
        self.session = session
        self.rng = rng
    }
}

import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics
import HTTPTypes
@testable import SwipeRankServer
import SwipeRankStore
import Testing

/// The service over an engine with a collaborative model (`swiperank serve --factors`).
@Suite("Service with collaborative factors")
struct FactorRouteTests {
    /// The fixture engine with f = 3 seeded factors and a large γ: after a few swipes the
    /// collaborative term decides the deck.
    static func engine(weight: Double = 40) throws -> SwipeEngine<SchoolMatcher> {
        var rng = SplitMix64(seed: 11)
        let ids = Array(Fixtures.engine.matcher.catalog.ids)
        let file = FactorModelFile(dimension: 3, confidence: 10, dislikeConfidence: 2, regularization: 1, weight: weight,
                                   itemIDs: ids, itemFactors: ids.map { _ in (0..<3).map { _ in Double.random(in: -1...1, using: &rng) } })
        return try Fixtures.engine.withFactors(file)
    }

    @Test("decks follow what the swipes taught the collaborative part; a restart serves the same next cards")
    func decksAndRestart() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiperank-factors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("db.sqlite").path
        let engine = try Self.engine()
        let profile = try StudentProfile.decode(json: Data(Fixtures.profile.utf8), source: "profile")
        // The reference: the engine alone, seeded as the service seeds the student.
        let service = StudentService(engine: engine, store: MemoryStore(), options: ServiceOptions(), logger: .init(label: "t"))
        let box = ReferenceBox(session: try engine.session(studentID: "f", profile: profile, seed: service.seed("f", 1)), rng: SplitMix64(seed: 0))
        let plainFirst = try Fixtures.engine.session(studentID: "f", profile: profile, seed: service.seed("f", 1))
        try await Harness(store: try SQLiteStore(path: path), engine: engine).run { c in
            try await c.createStudent("f")
            for round in 0..<3 {
                let deck = try await c.deck("f", count: 6)
                #expect(deck == box.session.deck(count: 6).ids, "round \(round)")
                for (i, school) in deck.enumerated() {
                    let like = i % 2 == 0
                    let reply = try await c.swipe("f", id: "s\(round)-\(i)", school: school, like: like, at: Int64(round * 10 + i))
                    #expect(reply.status == .ok || reply.status == .created, "\(reply.status)")
                    _ = try box.session.recordSwipe(Swipe(swipeID: "s\(round)-\(i)", cardID: school, action: like ? .like : .dislike,
                                                        timestamp: Int64(round * 10 + i)))
                }
            }
            #expect(box.session.collaborative?.observations == 18)
        }
        let next = box.session.ranking(count: 6).map(\.item.id)
        let swiped = box.session.served.filter { $0.action != nil }.map(\.cardID)
        // Without factors the same swipes would rank otherwise (the term is not a no-op).
        var plain = plainFirst
        for (i, school) in swiped.enumerated() {
            _ = try plain.recordJudgement(Swipe(swipeID: "p\(i)", cardID: school, action: i % 2 == 0 ? .like : .dislike, timestamp: 0), weight: 1)
        }
        #expect(plain.ranking(count: 6).map(\.item.id) != next)
        // A new server on the same database restores the student (replaying the swipes) and
        // serves exactly what the reference serves next.
        try await Harness(store: try SQLiteStore(path: path), engine: engine).run { c in
            let deck = try await c.deck("f", count: 6)
            #expect(deck == box.session.deck(count: 6).ids)
        }
    }
}

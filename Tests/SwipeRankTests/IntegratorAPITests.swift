import Foundation
import SwipeRank
import SwipeRankNumerics
import Testing

/// What a first-time integrator needs beyond serving decks: importing swipes logged elsewhere,
/// looking at the ranking without serving it, stateless recommendations that skip items, and
/// cards named for any catalog.
@Suite struct IntegratorAPITests {
    static let engine = SwipeEngine(matcher: Fixtures.matcher)

    /// Seeded random swipes on distinct random catalog rows, with colliding timestamps (the
    /// swipe id breaks those ties).
    static func history(count: Int, seed: UInt64, avoiding: Set<Int> = []) -> [Swipe] {
        var rng = SplitMix64(seed: seed)
        let catalog = Fixtures.matcher.catalog
        var rows: [Int] = []
        while rows.count < count {
            let row = Int(rng.next() % UInt64(catalog.count))
            if !rows.contains(row) && !avoiding.contains(row) { rows.append(row) }
        }
        return rows.enumerated().map { i, row in
            Swipe(swipeID: "h\(rng.next() % 1_000)-\(i)", cardID: catalog.ids[row],
                  action: rng.next() % 3 == 0 ? .like : .dislike, timestamp: Int64(rng.next() % 5))
        }
    }

    @Test("importHistory equals judging each swipe once in (timestamp, id) order, whatever the input order", arguments: 0..<6)
    func importMatchesReference(seed: UInt64) throws {
        let swipes = Self.history(count: 25, seed: seed)
        var session = try Self.engine.session(studentID: "i", profile: Fixtures.bostonStudent, seed: 9)
        // Reference: recordJudgement with weight 1, sorted by (timestamp, swipe id).
        var reference = session
        for swipe in swipes.sorted(by: { ($0.timestamp, $0.swipeID) < ($1.timestamp, $1.swipeID) }) {
            #expect(try reference.recordJudgement(swipe, weight: 1).outcome == .recorded)
        }
        var rng = SplitMix64(seed: 100 + seed)
        let results = session.importHistory(swipes.shuffled(using: &rng))
        #expect(results.count == swipes.count)
        #expect(results.allSatisfy { (try? $0.get().outcome) == .recorded })
        #expect(session.model == reference.model)
        #expect(session.totalSwipes == 25)
        #expect(session.snapshot() == reference.snapshot())
        // Idempotent by swipe id: importing it again changes nothing.
        let again = session.importHistory(swipes)
        #expect(again.allSatisfy { (try? $0.get().outcome) == .duplicate })
        #expect(session.model == reference.model)
        // Imported cards are never served afterwards.
        let imported = Set(swipes.map(\.cardID))
        let served = session.recommendations(count: 300).recommendations.map(\.item.id)
        #expect(served.count == 300)
        #expect(imported.isDisjoint(with: served))
    }

    @Test("importHistory: results in input order, errors per swipe, nothing else changed by a bad one")
    func importErrors() throws {
        var session = try Self.engine.session(studentID: "i", profile: Fixtures.bostonStudent, seed: 9)
        let good = Self.history(count: 3, seed: 42)
        let unknown = Swipe(swipeID: "u", cardID: "no-such-school", action: .like, timestamp: 0)
        let longID = Swipe(swipeID: String(repeating: "x", count: 300), cardID: good[0].cardID, action: .like, timestamp: 0)
        let results = session.importHistory([good[0], unknown, good[1], longID, good[2]])
        #expect(results.map { (try? $0.get().outcome) } == [.recorded, nil, .recorded, nil, .recorded])
        guard case let .failure(error) = results[1] else { Issue.record("an unknown card must fail"); return }
        #expect(error.kind == .unknownCard)
        guard case let .failure(tooLong) = results[3] else { Issue.record("an overlong id must fail"); return }
        #expect(tooLong.kind == .invalidSwipe)
        var reference = try Self.engine.session(studentID: "i", profile: Fixtures.bostonStudent, seed: 9)
        _ = reference.importHistory(good)
        #expect(session.snapshot() == reference.snapshot())
    }

    @Test("a history swipe on a card this session served and nobody swiped yet is that card's swipe")
    func importOnServedCard() throws {
        var session = try Self.engine.session(studentID: "i", profile: Fixtures.bostonStudent, seed: 9)
        let deck = session.recommendations(count: 5).recommendations.map(\.item.id)
        var reference = session
        let swipe = Swipe(swipeID: "late", cardID: deck[2], action: .like, timestamp: 3)
        _ = try reference.recordSwipe(swipe)
        let results = session.importHistory([swipe])
        #expect((try? results[0].get().outcome) == .recorded)
        #expect(session.snapshot() == reference.snapshot())
        #expect(session.served[2].action == .like)
    }

    @Test("one piece of evidence per card: a second import of a card, or one already swiped, is refused")
    func importOncePerCard() throws {
        var session = try Self.engine.session(studentID: "i", profile: Fixtures.bostonStudent, seed: 9)
        let deck = session.recommendations(count: 3).recommendations.map(\.item.id)
        _ = try session.recordSwipe(Swipe(swipeID: "w", cardID: deck[0], action: .like, timestamp: 1))
        let other = Self.history(count: 1, seed: 8, avoiding: Set(session.served.map(\.row)))[0]
        let before = session.snapshot()
        let results = session.importHistory([
            other,
            Swipe(swipeID: "again", cardID: other.cardID, action: .dislike, timestamp: other.timestamp + 1),
            Swipe(swipeID: "late", cardID: deck[0], action: .dislike, timestamp: 9),
        ])
        #expect((try? results[0].get().outcome) == .recorded)
        for i in [1, 2] {
            guard case let .failure(error) = results[i] else { Issue.record("swipe \(i) must be refused"); continue }
            #expect(error.kind == .alreadySwiped)
        }
        var reference = try Self.engine.restore(before)
        _ = try reference.recordJudgement(other, weight: 1)
        #expect(session.snapshot() == reference.snapshot())
    }

    @Test("importHistory survives a snapshot: the restored session continues identically")
    func importRoundTrip() throws {
        var session = try Self.engine.session(studentID: "i", profile: Fixtures.bostonStudent, seed: 9)
        _ = session.importHistory(Self.history(count: 12, seed: 7))
        _ = session.recommendations(count: 10)
        var restored = try Self.engine.restore(SessionSnapshot.decode(json: session.snapshot().jsonData(), source: "test"))
        #expect(restored.model == session.model)
        #expect(restored.recommendations(count: 10).recommendations == session.recommendations(count: 10).recommendations)
    }

    @Test("ranking(count:) is the posterior order of the unseen cards and changes nothing", arguments: 0..<4)
    func ranking(seed: UInt64) throws {
        var session = try Self.engine.session(studentID: "r", profile: Fixtures.bostonStudent, seed: seed)
        for round in 0..<3 {
            for (i, card) in session.recommendations(count: 10).recommendations.enumerated() where i % 2 == 0 {
                _ = try session.recordSwipe(Swipe(swipeID: "\(round)-\(i)", cardID: card.item.id,
                                                  action: (i + Int(seed)) % 3 == 0 ? .like : .dislike, timestamp: Int64(round)))
            }
        }
        let history = Self.history(count: 4, seed: 50 + seed, avoiding: Set(session.served.map(\.row)))
        _ = session.importHistory(history)
        let before = session.snapshot()
        var twin = session
        let ranked = session.ranking(count: 40)
        #expect(session.snapshot() == before)
        // Serving afterwards is what it would have been without the look.
        #expect(session.recommendations(count: 10).recommendations == twin.recommendations(count: 10).recommendations)

        // Reference: every unseen row (not served, not imported) by raw score, best first,
        // ties to the lower row.
        let catalog = Fixtures.matcher.catalog
        var scores: [Float] = []
        let look = try Self.engine.restore(before)
        catalog.scores(weights: look.weights, terms: look.student.terms, into: &scores)
        let seen = Set(look.served.map(\.row)).union(history.compactMap { catalog.row(of: $0.cardID) })
        let expected = (0..<catalog.count).filter { !seen.contains($0) }
            .sorted { scores[$0] > scores[$1] || (scores[$0] == scores[$1] && $0 < $1) }.prefix(40).map { catalog.ids[$0] }
        #expect(ranked.map(\.item.id) == expected)
        #expect(ranked.allSatisfy { !$0.isProbe })
        #expect(zip(ranked, ranked.dropFirst()).allSatisfy { $0.matchScore >= $1.matchScore })
        // Asking for more than is unseen gives every unseen card.
        #expect(look.ranking(count: .max).count == catalog.count - seen.count)
    }

    @Test("recommend(profile:count:excluding:) is the plain ranking without the excluded items")
    func recommendExcluding() throws {
        let matcher = Fixtures.matcher
        let full = try matcher.recommend(profile: Fixtures.bostonStudent, count: matcher.catalog.count).recommendations.map(\.item.id)
        var rng = SplitMix64(seed: 3)
        let excluded = Set(full.prefix(30).filter { _ in rng.next() % 2 == 0 } + ["not-a-school"])
        let got = try matcher.recommend(profile: Fixtures.bostonStudent, count: 20, excluding: excluded).recommendations.map(\.item.id)
        #expect(got == Array(full.filter { !excluded.contains($0) }.prefix(20)))
        // Excluding nothing is `recommend(profile:count:)`.
        #expect(try matcher.recommend(profile: Fixtures.bostonStudent, count: 20, excluding: []).recommendations
                == matcher.recommend(profile: Fixtures.bostonStudent, count: 20).recommendations)
        // Excluding everything leaves nothing; the count clamps to what is left.
        #expect(try matcher.recommend(profile: Fixtures.bostonStudent, count: 5, excluding: Set(full)).recommendations.isEmpty)
        let allButThree = Set(full.dropFirst(3))
        #expect(try matcher.recommend(profile: Fixtures.bostonStudent, count: 10, excluding: allButThree).recommendations.map(\.item.id)
                == Array(full.prefix(3)))
    }

    @Test("a card's item is the school in JSON: the key stays \"school\"")
    func itemKeepsSchoolKey() throws {
        let card = try Fixtures.matcher.recommend(profile: Fixtures.bostonStudent, count: 1).recommendations[0]
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(card)) as? [String: Any]
        #expect((json?["school"] as? [String: Any])?["id"] as? String == card.item.id)
        #expect(json?["item"] == nil)
        #expect(try JSONDecoder().decode(Recommendation.self, from: JSONEncoder().encode(card)) == card)
    }
}

import Foundation
import Testing
@testable import SwipeRank
import SwipeRankColleges
import SwipeRankEvaluation
import SwipeRankNumerics

/// A deck asked without explanations (`SwipeSession.deck(count:explained:)`, what the service
/// deals for its minimal and compressed card shapes) must be the explained deck with empty
/// explanations — the same cards, order, scores, grades, probes, distances and positions — and
/// leave the session exactly as the explained deck does, so a student who switches shapes
/// between requests is dealt what they would have been dealt anyway.
@Suite("Decks without explanations")
struct UnexplainedDeckTests {
    /// Plays `rounds` decks on two sessions with the same swipes: `a` always explained, `b`
    /// explained on a seeded coin. Compares every deck and the sessions at the end.
    /// Returns how many decks went unexplained, how many of their explained twins' cards had
    /// reasons, and how many of those reasons were collaborative ("Students who liked …").
    static func compare<M: Matcher>(_ engine: SwipeEngine<M>, profile: M.Profile, seed: UInt64, rounds: Int)
        throws -> (unexplained: Int, reasons: Int, collaborative: Int) {
        var a = try engine.session(studentID: "u", profile: profile, seed: seed)
        var b = try engine.session(studentID: "u", profile: profile, seed: seed)
        var rng = SplitMix64(seed: seed &* 7 &+ 1)
        var (unexplained, reasons, collaborative, swipe) = (0, 0, 0, 0)
        for round in 0..<rounds {
            let count = [1, 4, 10][Int(rng.next() % 3)]
            let explained = rng.next() % 2 == 0
            let deckA = a.deck(count: count), deckB = b.deck(count: count, explained: explained)
            if explained {
                #expect(deckA == deckB, "seed \(seed) round \(round)")
            } else {
                unexplained += 1
                var stripped = deckA
                for i in stripped.open.indices { stripped.open[i].recommendation.explanations = [] }
                for i in stripped.dealt.recommendations.indices { stripped.dealt.recommendations[i].explanations = [] }
                #expect(stripped == deckB, "seed \(seed) round \(round)")
                let explainedCards = deckA.open.map(\.recommendation) + deckA.dealt.recommendations
                reasons += explainedCards.filter { !$0.explanations.isEmpty }.count
                collaborative += explainedCards.flatMap(\.explanations).filter { $0.hasPrefix("Students who liked ") }.count
            }
            #expect(a.served == b.served, "seed \(seed) round \(round)")
            // Play the deck but, every third round, its last card (it stays open and comes back).
            let cards = deckA.open.map(\.recommendation) + deckA.dealt.recommendations
            for (i, card) in cards.enumerated() where !(round % 3 == 1 && i == cards.count - 1) {
                let like = Double(rng.next() % 1_000) / 1_000 < card.matchScore
                let s = Swipe(swipeID: "w\(swipe)", cardID: card.item.id, action: like ? .like : .dislike, timestamp: Int64(swipe))
                swipe += 1
                #expect(try a.recordSwipe(s) == b.recordSwipe(s))
            }
        }
        #expect(a.served == b.served && a.model.mean == b.model.mean && a.servedPerBand == b.servedPerBand)
        #expect(a.snapshot() == b.snapshot())
        return (unexplained, reasons, collaborative)
    }

    @Test("schools: unexplained decks are the explained ones without their reasons; the sessions end alike (6 seeds)")
    func schools() throws {
        let engine = SwipeEngine(matcher: Fixtures.matcher)
        var (unexplained, reasons) = (0, 0)
        for seed in UInt64(1)...6 {
            let r = try Self.compare(engine, profile: Fixtures.bostonStudent, seed: seed, rounds: 14)
            unexplained += r.unexplained
            reasons += r.reasons
        }
        // The comparison meant something: unexplained decks were asked, and their explained
        // twins had reasons to drop.
        #expect(unexplained >= 20 && reasons >= 100, "\(unexplained) unexplained decks, \(reasons) explained cards beside them")
    }

    @Test("items with collaborative factors: the \"Students who liked\" reasons are dropped too")
    func itemsWithFactors() throws {
        var rng = SplitMix64(seed: 91)
        let catalog = try SyntheticCatalog.catalog(items: 800, seed: 92)
        let engine = try SwipeEngine(matcher: ItemMatcher(catalog: catalog, regionAttribute: "neighborhood"))
            .withFactors(CollaborativeFactorsTests.file(catalog, f: 3, named: 300, using: &rng))
        var (unexplained, collaborative) = (0, 0)
        for seed in UInt64(11)...16 {
            let home = catalog.locations[Int(seed) * 37]
            let profile = ItemProfile(home: home, maxDistanceMiles: 25, preferences: ["price_level": -0.5])
            let r = try Self.compare(engine, profile: profile, seed: seed, rounds: 20)
            unexplained += r.unexplained
            collaborative += r.collaborative
        }
        // The factor reasons were among those dropped, not only the matcher's own.
        #expect(unexplained >= 20 && collaborative >= 3, "\(unexplained) unexplained decks, \(collaborative) collaborative reasons beside them")
    }

    @Test("the matchers' unexplained card is card(row:…) with no explanations, on every row")
    func cards() throws {
        let matcher = Fixtures.matcher
        let student = try matcher.student(Fixtures.bostonStudent)
        let weights = matcher.coldStartWeights(for: student)
        var explainedRows = 0
        for row in 0..<matcher.catalog.count {
            var card = matcher.card(row: row, raw: 0.3, student: student, weights: weights, isProbe: row % 4 == 0)
            explainedRows += card.explanations.isEmpty ? 0 : 1
            card.explanations = []
            #expect(matcher.unexplainedCard(row: row, raw: 0.3, student: student, weights: weights, isProbe: row % 4 == 0) == card)
        }
        #expect(explainedRows > matcher.catalog.count / 2)
        let catalog = try SyntheticCatalog.catalog(items: 300, seed: 93)
        let items = ItemMatcher(catalog: catalog, regionAttribute: "neighborhood")
        let user = try items.student(ItemProfile(home: catalog.locations[3], maxDistanceMiles: 30, preferences: ["price_level": -0.5]))
        let userWeights = items.coldStartWeights(for: user)
        for row in 0..<catalog.count {
            var card = items.card(row: row, raw: -0.2, student: user, weights: userWeights, isProbe: false)
            card.explanations = []
            #expect(items.unexplainedCard(row: row, raw: -0.2, student: user, weights: userWeights, isProbe: false) == card)
        }
    }
}

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
/// between requests is dealt what they would have been dealt anyway. The same holds for a brief
/// deck (`SwipeSession.briefDeck(count:)`, the service's minimal cards): its cards are the
/// explained deck's rows, positions, scores, grades and probe flags.
@Suite("Decks without explanations")
struct UnexplainedDeckTests {
    /// The explained deck `deck` of `session` (just dealt) as a brief deck's cards.
    static func brief<M: Matcher>(_ deck: Deck, of session: SwipeSession<M>) -> [BriefCard] {
        let catalog = session.engine.matcher.catalog
        let dealtPositions = session.served.suffix(deck.dealt.recommendations.count).map(\.position)
        let cards = deck.open.map { ($0.recommendation, $0.position) } + zip(deck.dealt.recommendations, dealtPositions).map { ($0, $1) }
        return cards.map { card, position in
            BriefCard(row: catalog.row(of: card.item.id)!, position: position, matchScore: card.matchScore, grade: card.grade, isProbe: card.isProbe)
        }
    }

    /// Plays `rounds` decks on two sessions with the same swipes: `a` always explained, `b`
    /// explained, unexplained or brief on a seeded die. Compares every deck and the sessions at
    /// the end. Returns how many decks went unexplained, how many of their explained twins'
    /// cards had reasons, how many of those reasons were collaborative ("Students who liked …"),
    /// and how many decks were brief.
    static func compare<M: Matcher>(_ engine: SwipeEngine<M>, profile: M.Profile, seed: UInt64, rounds: Int)
        throws -> (unexplained: Int, reasons: Int, collaborative: Int, brief: Int) {
        var a = try engine.session(studentID: "u", profile: profile, seed: seed)
        var b = try engine.session(studentID: "u", profile: profile, seed: seed)
        var rng = SplitMix64(seed: seed &* 7 &+ 1)
        var (unexplained, reasons, collaborative, brief, swipe) = (0, 0, 0, 0, 0)
        for round in 0..<rounds {
            let count = [1, 4, 10][Int(rng.next() % 3)]
            let shape = rng.next() % 3  // 0 explained, 1 unexplained, 2 brief
            let deckA = a.deck(count: count)
            if shape == 2 {
                brief += 1
                let deckB = b.briefDeck(count: count)
                #expect(deckB.cards == Self.brief(deckA, of: a), "seed \(seed) round \(round)")
                #expect(deckB.open.count == deckA.open.count && deckB.dealt.count == deckA.dealt.recommendations.count)
                #expect(deckB.learningState == deckA.dealt.learningState && deckB.totalSwipes == deckA.dealt.totalSwipes)
            } else if shape == 0 {
                let deckB = b.deck(count: count, explained: true)
                #expect(deckA == deckB, "seed \(seed) round \(round)")
            } else {
                let deckB = b.deck(count: count, explained: false)
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
        return (unexplained, reasons, collaborative, brief)
    }

    @Test("schools: unexplained and brief decks are the explained ones without what they leave out; the sessions end alike (8 seeds)")
    func schools() throws {
        let engine = SwipeEngine(matcher: Fixtures.matcher)
        var (unexplained, reasons, brief) = (0, 0, 0)
        for seed in UInt64(1)...8 {
            let r = try Self.compare(engine, profile: Fixtures.bostonStudent, seed: seed, rounds: 14)
            unexplained += r.unexplained
            reasons += r.reasons
            brief += r.brief
        }
        // The comparison meant something: unexplained and brief decks were asked, and the
        // unexplained decks' explained twins had reasons to drop.
        #expect(unexplained >= 20 && reasons >= 100 && brief >= 20,
                "\(unexplained) unexplained decks, \(reasons) explained cards beside them, \(brief) brief decks")
    }

    @Test("a large catalog's decks through the candidate index: brief decks are the explained ones' cards")
    func briefOnTheIndexPath() throws {
        let engines = CandidateIndexTests.engines(population: true, factors: false)
        var brief = 0
        for seed in UInt64(21)...22 {
            let profile = ItemProfile(home: CandidateIndexTests.homes(1, seed: seed)[0], maxDistanceMiles: 25,
                                      preferences: ["price_level": -0.5])
            let session = try engines.indexed.session(studentID: "i", profile: profile, seed: seed)
            #expect(session.usesCandidateIndex(student: session.student))
            brief += try Self.compare(engines.indexed, profile: profile, seed: seed, rounds: 10).brief
        }
        #expect(brief >= 4, "\(brief) brief decks")
    }

    @Test("items with collaborative factors: the \"Students who liked\" reasons are dropped too")
    func itemsWithFactors() throws {
        var rng = SplitMix64(seed: 91)
        let catalog = try SyntheticCatalog.catalog(items: 800, seed: 92)
        let engine = try SwipeEngine(matcher: ItemMatcher(catalog: catalog, regionAttribute: "neighborhood"))
            .withFactors(CollaborativeFactorsTests.file(catalog, f: 3, named: 300, using: &rng))
        var (unexplained, collaborative, brief) = (0, 0, 0)
        for seed in UInt64(11)...16 {
            let home = catalog.locations[Int(seed) * 37]
            let profile = ItemProfile(home: home, maxDistanceMiles: 25, preferences: ["price_level": -0.5])
            let r = try Self.compare(engine, profile: profile, seed: seed, rounds: 20)
            unexplained += r.unexplained
            collaborative += r.collaborative
            brief += r.brief
        }
        // The factor reasons were among those dropped, not only the matcher's own.
        #expect(unexplained >= 20 && collaborative >= 3 && brief >= 20,
                "\(unexplained) unexplained decks, \(collaborative) collaborative reasons beside them, \(brief) brief decks")
    }

    @Test("the matchers' unexplained card is card(row:…) with no explanations, and their match score its score, on every row")
    func cards() throws {
        let matcher = Fixtures.matcher
        let student = try matcher.student(Fixtures.bostonStudent)
        let weights = matcher.coldStartWeights(for: student)
        var explainedRows = 0
        var rng = SplitMix64(seed: 94)
        for row in 0..<matcher.catalog.count {
            var card = matcher.card(row: row, raw: 0.3, student: student, weights: weights, isProbe: row % 4 == 0)
            explainedRows += card.explanations.isEmpty ? 0 : 1
            // The score alone, bit for bit the card's, on raw scores across the calibration.
            let raw = Float(Double(rng.next() % 16_001) / 1_000 - 8)
            #expect(matcher.cardMatchScore(row: row, raw: raw, student: student, weights: weights).bitPattern
                    == matcher.card(row: row, raw: raw, student: student, weights: weights, isProbe: false).matchScore.bitPattern)
            #expect(matcher.cardMatchScore(row: row, raw: 0.3, student: student, weights: weights) == card.matchScore)
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
            let raw = Float(Double(rng.next() % 16_001) / 1_000 - 8)
            #expect(items.cardMatchScore(row: row, raw: raw, student: user, weights: userWeights).bitPattern
                    == items.card(row: row, raw: raw, student: user, weights: userWeights, isProbe: false).matchScore.bitPattern)
            card.explanations = []
            #expect(items.unexplainedCard(row: row, raw: -0.2, student: user, weights: userWeights, isProbe: false) == card)
        }
    }
}

import Foundation
@testable import SwipeRank
import SwipeRankColleges
import SwipeRankEvaluation
import SwipeRankNumerics
import Testing

/// A deck writes each card with its next-best reasons (`Matcher.cardWithCandidates`) instead of
/// ranking the reasons of a card again when the explanation variety needs more: the card must be
/// exactly `card(row:…)`'s, the candidates exactly `explanations(row:…limit: 6)`, and a varied
/// deck the same with or without them.
@Suite("Cards written with their candidate reasons")
struct CardCandidatesTests {
    @Test("schools: every card equals card(row:…), its candidates the six best reasons, under cold-start and random weights")
    func schools() throws {
        var rng = SplitMix64(seed: 71)
        let matcher = Fixtures.matcher
        let student = try matcher.student(Fixtures.bostonStudent)
        let d = matcher.catalog.dimension, k = student.terms.names.count
        let random = PreferenceWeights(features: (0..<d).map { _ in Float.random(in: -1...1.5, using: &rng) },
                                       terms: (0..<k).map { _ in Float.random(in: -0.5...2, using: &rng) })
        var longer = 0
        for weights in [matcher.coldStartWeights(for: student), random] {
            for row in 0..<matcher.catalog.count {
                let raw = Float.random(in: -3...3, using: &rng), isProbe = row % 4 == 0
                let (card, candidates) = matcher.cardWithCandidates(row: row, raw: raw, student: student, weights: weights, isProbe: isProbe)
                #expect(card == matcher.card(row: row, raw: raw, student: student, weights: weights, isProbe: isProbe), "row \(row)")
                let six = matcher.explanations(row: row, student: student, weights: weights, limit: ExplanationVariety.candidates)
                #expect(candidates == six, "row \(row)")
                #expect(Array(six.prefix(3)) == card.explanations, "row \(row)")
                longer += six.count > 3 ? 1 : 0
            }
        }
        #expect(longer > 100, "the candidates go past the shown reasons on many schools")
    }

    @Test("items: every card equals card(row:…), its candidates the six best reasons")
    func items() throws {
        let catalog = try SyntheticCatalog.catalog(items: 600, seed: 72)
        let matcher = ItemMatcher(catalog: catalog, regionAttribute: "neighborhood")
        let user = try matcher.student(ItemProfile(home: catalog.locations[7], maxDistanceMiles: 30, preferences: ["price_level": -0.5]))
        let weights = matcher.coldStartWeights(for: user)
        for row in 0..<catalog.count {
            let (card, candidates) = matcher.cardWithCandidates(row: row, raw: 0.25, student: user, weights: weights, isProbe: false)
            #expect(card == matcher.card(row: row, raw: 0.25, student: user, weights: weights, isProbe: false), "row \(row)")
            #expect(candidates == matcher.explanations(row: row, student: user, weights: weights, limit: ExplanationVariety.candidates))
        }
    }

    @Test("a varied deck is the same with the cards' candidates as with the matcher asked again (20 seeded decks)")
    func variedDeck() throws {
        var rng = SplitMix64(seed: 73)
        let matcher = Fixtures.matcher
        let student = try matcher.student(Fixtures.bostonStudent)
        let weights = matcher.coldStartWeights(for: student)
        for _ in 0..<20 {
            let rows = (0..<12).map { _ in Int.random(in: 0..<matcher.catalog.count, using: &rng) }
            var written: [Recommendation] = [], candidates: [[String]?] = []
            for row in rows {
                let (card, reasons) = matcher.cardWithCandidates(row: row, raw: 0.5, student: student, weights: weights, isProbe: false)
                written.append(card)
                // Some cards without candidates: those are asked of the matcher.
                candidates.append(Bool.random(using: &rng) ? reasons : nil)
            }
            var asked = written
            matcher.varyExplanations(&written, candidates: candidates, student: student, weights: weights)
            matcher.varyExplanations(&asked, student: student, weights: weights)
            #expect(written == asked)
        }
    }
}

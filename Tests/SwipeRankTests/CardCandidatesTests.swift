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

    @Test("schools: the keyed candidates are the candidates, each key the key of its text, for varied students (5 seeds)",
          arguments: 0..<5)
    func keyedSchools(seed: UInt64) throws {
        var rng = SplitMix64(seed: 7_400 + seed)
        let schools = Fixtures.schools
        let matcher = SchoolMatcher(schools: schools, termBasis: seed == 4 ? .expanded : .standard)
        // Varied students: with or without a home (distances, NaN for schools without a
        // location), budget, SAT and majors (several offered: "Offers … and N more").
        let row = Int.random(in: 0..<schools.catalog.count, using: &rng)
        let profile = StudentProfile(home: seed == 1 ? nil : schools.catalog.locations[row],
                                     homeState: seed % 2 == 0 ? schools.catalog.textValues[schools.catalog.textAttribute(named: "state")!][row] : nil,
                                     maxDistanceMiles: Double.random(in: 20...1500, using: &rng),
                                     annualBudget: seed == 2 ? nil : Double.random(in: 5_000...70_000, using: &rng),
                                     sat: seed == 3 ? nil : Double(Int.random(in: 800...1600, using: &rng)),
                                     intendedMajors: ["Psychology", "Nursing", "52", "History", "Computer Science"].filter { _ in Bool.random(using: &rng) })
        let student = try matcher.student(profile)
        let d = schools.catalog.dimension, k = student.terms.names.count
        let random = PreferenceWeights(features: (0..<d).map { _ in Float.random(in: -1...1.5, using: &rng) },
                                       terms: (0..<k).map { _ in Float.random(in: -0.5...2.5, using: &rng) })
        var keyed = 0
        for weights in [matcher.coldStartWeights(for: student), random] {
            for row in 0..<schools.catalog.count {
                let (card, candidates, keys) = matcher.cardWithKeyedCandidates(row: row, raw: 0.5, student: student, weights: weights, isProbe: false)
                let (plainCard, plainCandidates) = matcher.cardWithCandidates(row: row, raw: 0.5, student: student, weights: weights, isProbe: false)
                #expect(card == plainCard && candidates == plainCandidates, "seed \(seed) row \(row)")
                let texts = try #require(candidates), given = try #require(keys)
                #expect(given == texts.map(ExplanationVariety.Key.init), "seed \(seed) row \(row): \(texts)")
                #expect(Array(texts.prefix(card.explanations.count)) == card.explanations)
                keyed += given.count
            }
        }
        #expect(keyed > schools.catalog.count, "seed \(seed): most schools have reasons")
    }

    @Test("the variety with keys given equals the variety keying every text (40 seeded decks)", arguments: 0..<40)
    func keyedVariety(seed: UInt64) {
        var rng = SplitMix64(seed: 7_500 + seed)
        // Few distinct sentences (and numbers that key alike), so reasons repeat across the deck.
        let pool = ["Close to home (12 mi)", "Close to home (40 mi)", "In the Southeast region", "Public university",
                    "Selective: admits 5%", "Selective: admits 45%", "High graduation rate (97%)", "Big Business department (8% of graduates)",
                    "Low net price ($12,000/yr)", "City setting (large)"]
        let n = Int.random(in: 2...12, using: &rng)
        let candidates: [[String]] = (0..<n).map { _ in (0..<Int.random(in: 0...6, using: &rng)).map { _ in pool.randomElement(using: &rng)! } }
        // A card shows its first three candidates, some with another reason put before them.
        let shown: [[String]] = candidates.map { list in
            let first = Array(list.prefix(3))
            return Bool.random(using: &rng) && !first.isEmpty ? ["Students who liked Rice also liked this"] + first : first
        }
        let given = (0..<n).map { _ in Bool.random(using: &rng) }  // cards whose keys are given
        let expected = ExplanationVariety.vary(shown: shown, candidates: candidates)
        let got = ExplanationVariety.vary(shown: shown, shownKey: { i, j in given[i] ? ExplanationVariety.Key(shown[i][j]) : nil },
                                          more: { i in (candidates[i], given[i] ? candidates[i].map(ExplanationVariety.Key.init) : nil) })
        #expect(got == expected, "seed \(seed)")
        // And through the deck's bookkeeping: the keys of the candidates, the put-before reason's.
        var keys = CandidateKeys()
        for i in 0..<n { keys.append(given[i] ? candidates[i].map(ExplanationVariety.Key.init) : nil) }
        for i in 0..<n where shown[i].count > min(3, candidates[i].count) { keys.insertFirst(shown[i][0], card: i) }
        for i in 0..<n where given[i] {
            for j in shown[i].indices { #expect(keys.shownKey(card: i, place: j) == ExplanationVariety.Key(shown[i][j]), "seed \(seed) card \(i)") }
        }
    }

    @Test("keys shorter than a card's reasons (a matcher breaking the contract) are keyed from the text past their end")
    func shortKeys() throws {
        var rng = SplitMix64(seed: 7_600)
        let matcher = Fixtures.matcher
        let student = try matcher.student(Fixtures.bostonStudent)
        let weights = matcher.coldStartWeights(for: student)
        var cards: [Recommendation] = [], candidates: [[String]?] = [], keys = CandidateKeys()
        for _ in 0..<12 {
            let row = Int.random(in: 0..<matcher.catalog.count, using: &rng)
            let (card, reasons, given) = matcher.cardWithKeyedCandidates(row: row, raw: 0.5, student: student, weights: weights, isProbe: false)
            cards.append(card)
            candidates.append(reasons)
            keys.append(given.map { Array($0.prefix(1)) })  // one key where there are up to six
        }
        for i in cards.indices where cards[i].explanations.count > 1 { #expect(keys.shownKey(card: i, place: 1) == nil) }
        var short = cards, none = cards
        matcher.varyExplanations(&short, candidates: candidates, keys: keys, student: student, weights: weights)
        matcher.varyExplanations(&none, candidates: candidates, student: student, weights: weights)
        #expect(short == none)
    }
}

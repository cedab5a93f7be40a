import Foundation
import SwipeRank
import SwipeRankColleges
import SwipeRankNumerics
import Testing

/// Where probes come from (`EngineConfiguration.probeCandidates`), against a reference that
/// rebuilds the candidate window and the draw's probabilities from the session's state.
@Suite struct ProbeCandidateTests {
    /// A student without a home: one pool, no bands, no novelty bonus, so the window is the
    /// unseen cards by raw score (plausibly good) or by closeness to match 0.5 (boundary).
    static let homeless = StudentProfile(homeState: "OH", annualBudget: 30_000, sat: 1250, intendedMajors: ["Psychology"])

    @Test("each probe is drawn from its window with the softmax-of-variance probability it records",
          arguments: [ProbeCandidates.plausiblyGood, .boundary])
    func window(candidates: ProbeCandidates) throws {
        let engine = SwipeEngine(matcher: Fixtures.matcher).reconfigured { $0.probeCandidates = candidates }
        var session = try engine.session(studentID: "p", profile: Self.homeless, seed: 11)
        let catalog = Fixtures.matcher.catalog
        var probes = 0
        for round in 0..<5 {
            let before = session
            var raw: [Float] = []
            catalog.scores(weights: before.weights, terms: before.student.terms, into: &raw)
            let deck = session.recommendations(count: 10).recommendations
            let firstPosition = before.served.count + 1
            for (i, card) in deck.enumerated() where card.isProbe {
                probes += 1
                let taken = Set(before.served.map(\.row) + deck[..<i].map { catalog.row(of: $0.item.id)! })
                let unseen = (0..<catalog.count).filter { !taken.contains($0) }
                let key: (Int) -> Float = candidates == .plausiblyGood
                    ? { raw[$0] } : { -abs(raw[$0] - Float(Fixtures.matcher.calibration.offset)) }
                let (window, temperature) = ProbeScheduler().exploration(for: before.phase)
                let ranked = unseen.sorted { key($0) > key($1) || (key($0) == key($1) && $0 < $1) }
                let windowRows = Array(ranked.prefix(window))
                let row = catalog.row(of: card.item.id)!
                #expect(windowRows.contains(row), "round \(round) position \(firstPosition + i)")
                // The recorded propensity is the softmax of the window's variances.
                let variances = before.model.variances(along: windowRows.map { before.combinedVector(row: $0) })
                let top = variances.max()!
                let weights = variances.map { exp(($0 - top) / temperature) }
                let expected = weights[windowRows.firstIndex(of: row)!] / weights.reduce(0, +)
                let served = session.served[before.served.count + i]
                #expect(abs(served.propensity - expected) < 1e-12, "round \(round)")
            }
            for (i, card) in deck.enumerated() {
                _ = try session.recordSwipe(Swipe(swipeID: "\(round)-\(i)", cardID: card.item.id,
                                                  action: i % 3 == 0 ? .like : .dislike, timestamp: Int64(round * 10 + i)))
            }
        }
        #expect(probes == 12)
    }

    @Test("a draw over values that are not numbers: NaN never drawn, +∞ shares the draw, nothing to weigh is uniform; the propensity is the frequency",
          arguments: 0..<6)
    func nonFiniteDraw(seed: UInt64) {
        let nan = Double.nan, inf = Double.infinity
        // Values, then each index's probability by the rule.
        let cases: [([Double], [Double])] = [
            ([nan, 1, -inf, 2], [0, 1 / (1 + exp(1)), 0, exp(1) / (1 + exp(1))]),
            ([inf, 3, nan, inf], [0.5, 0, 0, 0.5]),
            ([nan, -inf, nan], [1.0 / 3, 1.0 / 3, 1.0 / 3]),
            ([-inf], [1]),
            ([nan, 0.5, 0.5], [0, 0.5, 0.5]),
            ([-2, 5, 1e308, -1e308], [0, 0, 1, 0]),
        ]
        let (values, probability) = cases[Int(seed)]
        var rng = SplitMix64(seed: 60 + seed)
        var counts = [Int](repeating: 0, count: values.count)
        let draws = 4_000
        for _ in 0..<draws {
            let (index, propensity) = ProbeScheduler.draw(uncertainties: values, temperature: 1, using: &rng)
            counts[index] += 1
            #expect(abs(propensity - probability[index]) < 1e-12, "\(values): index \(index) propensity \(propensity)")
        }
        // Frequencies within 5 standard errors of the probabilities (never drawn when 0).
        for (i, p) in probability.enumerated() {
            let frequency = Double(counts[i]) / Double(draws)
            #expect(abs(frequency - p) <= 5 * (p * (1 - p) / Double(draws)).squareRoot(), "\(values): index \(i) drawn \(counts[i]) times")
        }
    }

    @Test("plausibly good probes are better cards than boundary probes")
    func betterCards() throws {
        var meanMatch: [ProbeCandidates: Double] = [:]
        for candidates in [ProbeCandidates.plausiblyGood, .boundary] {
            let engine = SwipeEngine(matcher: Fixtures.matcher).reconfigured { $0.probeCandidates = candidates }
            var total = 0.0
            for seed in 0..<10 as Range<UInt64> {
                var session = try engine.session(studentID: "b", profile: Fixtures.bostonStudent, seed: seed)
                total += session.recommendations(count: 20).recommendations.filter(\.isProbe).map(\.matchScore).reduce(0, +) / 5
            }
            meanMatch[candidates] = total / 10
        }
        #expect(meanMatch[.plausiblyGood]! > meanMatch[.boundary]! + 0.1, "\(meanMatch)")
    }
}

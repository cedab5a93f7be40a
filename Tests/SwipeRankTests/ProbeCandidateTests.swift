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

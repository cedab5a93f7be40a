import Foundation
import Testing
@testable import SwipeRankEvaluation
import SwipeRankNumerics

/// `FactorFit.select`: the mean-NDCG ranking of the choice's rows and the one-standard-error
/// rule that keeps γ = 0 unless the factors' best row beats it by more than one standard error of
/// the paired differences — against a reference written out here, on seeded random scores.
@Suite("Collaborative choice: the one-standard-error rule")
struct FactorChoiceRuleTests {
    /// Per candidate, per weight, `students` NDCGs: a shared per-student level (what makes the
    /// differences paired) plus `lift[c][w]` plus independent noise of `noise`.
    static func scores(lift: [[Double]], students: Int, noise: Double, seed: UInt64) -> [[[Double]]] {
        var rng = SplitMix64(seed: seed)
        let level = (0..<students).map { _ in 0.3 + 0.1 * rng.nextGaussian() }
        return lift.map { row in row.map { l in level.map { $0 + l + noise * rng.nextGaussian() } } }
    }

    /// The rule spelled out: the best row with γ > 0 by mean (first on a tie), its paired
    /// differences to the same candidate's γ = 0, and the sample standard error.
    static func reference(_ scores: [[[Double]]], weights: [Double]) -> (c: Int, w: Int) {
        var best: (c: Int, w: Int, mean: Double)?
        for c in scores.indices {
            for w in weights.indices where weights[w] > 0 {
                let m = scores[c][w].reduce(0, +) / Double(scores[c][w].count)
                if best == nil || m > best!.mean { best = (c, w, m) }
            }
        }
        let zero = weights.firstIndex(of: 0)!
        let d = zip(scores[best!.c][best!.w], scores[best!.c][zero]).map { $0 - $1 }
        let mean = d.reduce(0, +) / Double(d.count)
        let sd = (d.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(d.count - 1)).squareRoot()
        return mean > sd / Double(d.count).squareRoot() ? (best!.c, best!.w) : (0, zero)
    }

    @Test("seeded random tables: the choice is the reference's, the table ranked by mean; both outcomes of the rule occur")
    func matchesReference() {
        var outcomes = Set<Bool>()
        for seed in 0..<24 {
            var rng = SplitMix64(seed: UInt64(seed) &+ 100)
            let weights: [Double] = [0, 0.5, 1, 2, 4]
            let candidates = 1 + Int(rng.next() % 3), students = 5 + Int(rng.next() % 200)
            // Lifts around the noise's standard error, so both outcomes of the rule occur.
            let noise = 0.05, se = noise / Double(students).squareRoot()
            let lift = (0..<candidates).map { _ in weights.map { $0 == 0 ? 0 : (Double.random(in: 0..<1, using: &rng) * 4 - 1.5) * se } }
            let s = Self.scores(lift: lift, students: students, noise: noise, seed: UInt64(seed))
            let (ranked, chosen, gain) = FactorFit.select(scores: s, weights: weights)
            let expected = Self.reference(s, weights: weights)
            #expect(chosen.c == expected.c && chosen.w == expected.w, "seed \(seed)")
            #expect(ranked.count == candidates * weights.count)
            #expect(zip(ranked, ranked.dropFirst()).allSatisfy { $0.ndcg >= $1.ndcg })
            #expect(gain != nil && gain!.standardError > 0)
            outcomes.insert(weights[chosen.w] > 0)
        }
        #expect(outcomes == [false, true], "the seeds must exercise both the factors taken and declined")
    }

    @Test("a lead of half a standard error keeps γ = 0; a lead of two takes the factors", arguments: [0.5, 0.99, 1.01, 2.0])
    func threshold(standardErrors: Double) {
        // Paired differences ±x around a mean δ: their standard error is x·√(n/(n−1))/√n.
        let n = 100, x = 0.04
        let base = (0..<n).map { 0.2 + 0.001 * Double($0 % 7) }
        let se = x * (Double(n) / Double(n - 1)).squareRoot() / Double(n).squareRoot()
        let delta = standardErrors * se
        let lifted = base.enumerated().map { $0.element + delta + ($0.offset % 2 == 0 ? x : -x) }
        let (ranked, chosen, gain) = FactorFit.select(scores: [[base, lifted]], weights: [0, 1])
        #expect(abs(gain!.mean - delta) < 1e-12 && abs(gain!.standardError - se) < 1e-12)
        #expect(chosen.w == (standardErrors > 1 ? 1 : 0))
        // The table ranks by mean whatever was chosen: the lifted row first.
        #expect(ranked.map(\.w) == [1, 0])
    }

    @Test("edge cases: one student or none keeps γ = 0; no γ = 0 to compare with, or only γ = 0, takes the best mean")
    func edges() {
        let one = FactorFit.select(scores: [[[0.1], [0.9]]], weights: [0, 1])
        #expect(one.chosen.w == 0 && one.gain!.standardError == .infinity)
        let none = FactorFit.select(scores: [[[], []]], weights: [0, 1])
        #expect(none.chosen.w == 0 && none.gain!.mean == 0)
        let noZero = FactorFit.select(scores: [[[0.1, 0.2], [0.3, 0.1]]], weights: [1, 2])
        #expect(noZero.chosen.w == 1 && noZero.gain == nil)
        let onlyZero = FactorFit.select(scores: [[[0.1, 0.2]], [[0.1, 0.2]]], weights: [0])
        #expect(onlyZero.chosen.c == 0 && onlyZero.chosen.w == 0 && onlyZero.gain == nil)
    }
}

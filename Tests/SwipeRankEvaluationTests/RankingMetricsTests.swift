import Foundation
import Testing
import SwipeRankEvaluation
import SwipeRankNumerics

@Suite("Ranking metrics")
struct RankingMetricsTests {
    let ranking = ["a", "b", "c", "d", "e"]

    @Test("hand-computed values")
    func handComputed() {
        let relevant: Set = ["b", "d", "z"]
        #expect(RankingMetrics.precision(ranking: ranking, relevant: relevant, k: 4) == 0.5)
        #expect(RankingMetrics.recall(ranking: ranking, relevant: relevant, k: 4) == 2.0 / 3)
        let dcg = 1 / log2(3.0) + 1 / log2(5.0)
        let ideal = 1 + 1 / log2(3.0) + 1 / log2(4.0)
        #expect(abs(RankingMetrics.ndcg(ranking: ranking, relevant: relevant, k: 5) - dcg / ideal) < 1e-12)
        #expect(abs(RankingMetrics.averagePrecision(ranking: ranking, relevant: relevant, k: 5) - (0.5 + 0.5) / 3) < 1e-12)
        #expect(RankingMetrics.reciprocalRank(ranking: ranking, relevant: relevant) == 0.5)
        // Negatives a, c, e: b beats c and e, d beats e → 3 of 2 × 3 pairs ("z" is unranked).
        #expect(RankingMetrics.auc(ranking: ranking, relevant: relevant) == 3.0 / 6)
        #expect(RankingMetrics.ndcg(ranking: ranking, relevant: [], k: 3) == 0)
        #expect(RankingMetrics.auc(ranking: ranking, relevant: Set(ranking)) == nil)
    }

    @Test("AUC equals the pairwise definition on random rankings", arguments: 0..<20)
    func aucPairwise(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let items = Array(0..<Int.random(in: 2...60, using: &rng)).shuffled(using: &rng)
        let relevant = Set(items.filter { _ in Bool.random(using: &rng) })
        guard let auc = RankingMetrics.auc(ranking: items, relevant: relevant) else {
            #expect(relevant.isEmpty || relevant.count == items.count)
            return
        }
        var wins = 0, pairs = 0
        for (i, p) in items.enumerated() where relevant.contains(p) {
            for (j, n) in items.enumerated() where !relevant.contains(n) { pairs += 1; if i < j { wins += 1 } }
        }
        #expect(abs(auc - Double(wins) / Double(pairs)) < 1e-12, "seed \(seed)")
    }

    @Test("tie-aware metrics equal the average over every order of the tied items", arguments: 0..<40)
    func tieAware(seed: UInt64) {
        var rng = SplitMix64(seed: 900 + seed)
        let n = Int.random(in: 1...7, using: &rng)
        // Few distinct scores, so ties are common (seed 0: all equal, a constant policy).
        let scores = (0..<n).map { _ in seed == 0 ? Float(1) : Float(Int.random(in: 0...2, using: &rng)) }
        let relevant = (0..<n).map { _ in Bool.random(using: &rng) }
        let k = Int.random(in: 1...4, using: &rng)
        // Reference: every permutation, kept when it sorts the scores descending; plain metrics averaged.
        func permutations(_ items: [Int]) -> [[Int]] {
            items.count <= 1 ? [items] : items.indices.flatMap { i in
                permutations(Array(items[..<i] + items[(i + 1)...])).map { [items[i]] + $0 }
            }
        }
        let orders = permutations(Array(0..<n)).filter { zip($0, $0.dropFirst()).allSatisfy { scores[$0.0] >= scores[$0.1] } }
        let positives = Set((0..<n).filter { relevant[$0] })
        func mean(_ f: ([Int]) -> Double) -> Double { orders.map(f).reduce(0, +) / Double(orders.count) }
        let got = RankingMetrics.tieAware(scores: scores, relevant: relevant, k: k)
        #expect(abs(got.precision - mean { RankingMetrics.precision(ranking: $0, relevant: positives, k: k) }) < 1e-12, "seed \(seed)")
        #expect(abs(got.recall - mean { RankingMetrics.recall(ranking: $0, relevant: positives, k: k) }) < 1e-12, "seed \(seed)")
        #expect(abs(got.ndcg - mean { RankingMetrics.ndcg(ranking: $0, relevant: positives, k: k) }) < 1e-12, "seed \(seed)")
        if positives.isEmpty || positives.count == n {
            #expect(got.auc == nil)
        } else {
            let auc = mean { RankingMetrics.auc(ranking: $0, relevant: positives)! }
            #expect(abs(got.auc! - auc) < 1e-12, "seed \(seed)")
        }
        #expect(RankingMetrics.isConstant(scores) == (Set(scores).count <= 1))
    }

    @Test("a constant policy reads chance whatever the item order: AUC ½")
    func constantIsChance() {
        let relevant = [true, true, false, false, false, false]
        #expect(RankingMetrics.tieAware(scores: [Float](repeating: 3, count: 6), relevant: relevant, k: 2).auc == 0.5)
        #expect(RankingMetrics.tieAware(scores: [Float](repeating: 3, count: 6), relevant: relevant.reversed(), k: 2).auc == 0.5)
        #expect(RankingMetrics.auc(ranking: [0, 1, 2, 3, 4, 5], relevant: [0, 1]) == 1)   // the row order's verdict
    }

    @Test("graded NDCG is 1 for the ideal order and lower for any other")
    func graded() {
        let gains = ["a": 3.0, "b": 2, "c": 1, "d": 0]
        #expect(RankingMetrics.ndcg(ranking: ["a", "b", "c", "d"], gains: gains, k: 3) == 1)
        #expect(RankingMetrics.ndcg(ranking: ["b", "a", "c", "d"], gains: gains, k: 3) < 1)
        #expect(RankingMetrics.ndcg(ranking: ["d"], gains: ["d": 0], k: 1) == 0)
    }
}

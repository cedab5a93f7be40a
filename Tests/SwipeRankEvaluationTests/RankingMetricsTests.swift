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

    @Test("graded NDCG is 1 for the ideal order and lower for any other")
    func graded() {
        let gains = ["a": 3.0, "b": 2, "c": 1, "d": 0]
        #expect(RankingMetrics.ndcg(ranking: ["a", "b", "c", "d"], gains: gains, k: 3) == 1)
        #expect(RankingMetrics.ndcg(ranking: ["b", "a", "c", "d"], gains: gains, k: 3) < 1)
        #expect(RankingMetrics.ndcg(ranking: ["d"], gains: ["d": 0], k: 1) == 0)
    }
}

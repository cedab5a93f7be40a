import Foundation

/// Ranking-quality measures of one ranked list against a set of relevant items.
///
/// All take the ranking best first and count an item relevant if it is in `relevant`
/// (binary relevance). Cut-offs `k` larger than the ranking use the whole ranking.
///
///     RankingMetrics.ndcg(ranking: ["a", "b", "c"], relevant: ["c"], k: 3)   // 1 / log2(4) = 0.5
public enum RankingMetrics {
    /// The share of the top `k` that is relevant.
    ///
    /// - Parameters:
    ///   - ranking: Items, best first.
    ///   - relevant: The relevant items.
    ///   - k: The cut-off, > 0.
    /// - Returns: Relevant in the top k / k.
    /// - Complexity: O(k).
    public static func precision<T: Hashable>(ranking: [T], relevant: Set<T>, k: Int) -> Double {
        precondition(k > 0, "precision@k needs k > 0")
        return Double(ranking.prefix(k).filter(relevant.contains).count) / Double(k)
    }

    /// The share of the relevant items found in the top `k`; 0 when nothing is relevant.
    ///
    /// - Parameters:
    ///   - ranking: Items, best first.
    ///   - relevant: The relevant items.
    ///   - k: The cut-off, > 0.
    /// - Returns: Relevant in the top k / all relevant.
    /// - Complexity: O(k).
    public static func recall<T: Hashable>(ranking: [T], relevant: Set<T>, k: Int) -> Double {
        precondition(k > 0, "recall@k needs k > 0")
        guard !relevant.isEmpty else { return 0 }
        return Double(ranking.prefix(k).filter(relevant.contains).count) / Double(relevant.count)
    }

    /// Normalized discounted cumulative gain at `k` with binary gains:
    /// DCG = Σ 1/log₂(rank + 1) over relevant ranks ≤ k, divided by the DCG of an ideal
    /// ranking (all relevant first). 0 when nothing is relevant.
    ///
    /// - Parameters:
    ///   - ranking: Items, best first.
    ///   - relevant: The relevant items.
    ///   - k: The cut-off, > 0.
    /// - Returns: A value in [0, 1].
    /// - Complexity: O(k).
    public static func ndcg<T: Hashable>(ranking: [T], relevant: Set<T>, k: Int) -> Double {
        precondition(k > 0, "NDCG@k needs k > 0")
        guard !relevant.isEmpty else { return 0 }
        var dcg = 0.0
        for (i, item) in ranking.prefix(k).enumerated() where relevant.contains(item) { dcg += 1 / log2(Double(i + 2)) }
        let ideal = (0..<min(k, relevant.count)).reduce(0.0) { $0 + 1 / log2(Double($1 + 2)) }
        return dcg / ideal
    }

    /// Graded NDCG@k: gains are given per item (e.g. a hidden true utility), and the ideal
    /// ranking sorts all items by gain.
    ///
    /// - Parameters:
    ///   - ranking: Items, best first.
    ///   - gains: Gain of each item (missing items gain 0); gains must not be negative.
    ///   - k: The cut-off, > 0.
    /// - Returns: A value in [0, 1]; 0 when every gain is 0.
    /// - Complexity: O(n log n) for n gains.
    public static func ndcg<T: Hashable>(ranking: [T], gains: [T: Double], k: Int) -> Double {
        precondition(k > 0, "NDCG@k needs k > 0")
        var dcg = 0.0
        for (i, item) in ranking.prefix(k).enumerated() { dcg += (gains[item] ?? 0) / log2(Double(i + 2)) }
        let best = gains.values.sorted(by: >).prefix(k)
        let ideal = best.enumerated().reduce(0.0) { $0 + $1.element / log2(Double($1.offset + 2)) }
        return ideal > 0 ? dcg / ideal : 0
    }

    /// Average precision at `k`: the mean of precision@i over the ranks i ≤ k that hold a
    /// relevant item, divided by min(k, relevant count). 0 when nothing is relevant.
    ///
    /// - Parameters:
    ///   - ranking: Items, best first.
    ///   - relevant: The relevant items.
    ///   - k: The cut-off, > 0.
    /// - Returns: A value in [0, 1].
    /// - Complexity: O(k).
    public static func averagePrecision<T: Hashable>(ranking: [T], relevant: Set<T>, k: Int) -> Double {
        precondition(k > 0, "AP@k needs k > 0")
        guard !relevant.isEmpty else { return 0 }
        var hits = 0, sum = 0.0
        for (i, item) in ranking.prefix(k).enumerated() where relevant.contains(item) {
            hits += 1
            sum += Double(hits) / Double(i + 1)
        }
        return sum / Double(min(k, relevant.count))
    }

    /// The reciprocal rank of the first relevant item; 0 if none is ranked.
    ///
    /// - Parameters:
    ///   - ranking: Items, best first.
    ///   - relevant: The relevant items.
    /// - Returns: 1 / rank of the first hit.
    /// - Complexity: O(n).
    public static func reciprocalRank<T: Hashable>(ranking: [T], relevant: Set<T>) -> Double {
        guard let i = ranking.firstIndex(where: relevant.contains) else { return 0 }
        return 1 / Double(i + 1)
    }

    /// The area under the ROC curve of a full ranking: the probability that a random relevant
    /// item is ranked above a random non-relevant one. Items of `ranking` not in `relevant` are
    /// the negatives. nil when either class is empty.
    ///
    /// - Parameters:
    ///   - ranking: All candidate items, best first.
    ///   - relevant: The relevant items.
    /// - Returns: AUC in [0, 1], or nil.
    /// - Complexity: O(n).
    public static func auc<T: Hashable>(ranking: [T], relevant: Set<T>) -> Double? {
        var negativesBelow = 0, positives = 0, pairs = 0
        // Walk from the bottom: each positive beats the negatives already seen below it.
        for item in ranking.reversed() {
            if relevant.contains(item) { positives += 1; pairs += negativesBelow } else { negativesBelow += 1 }
        }
        guard positives > 0, negativesBelow > 0 else { return nil }
        return Double(pairs) / Double(positives * negativesBelow)
    }
}
